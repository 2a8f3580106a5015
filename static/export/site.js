// The static copy of Quizlab (app/export/site.py): its one script, on every page.

// Search without a server, on the home page. The index is a JSON block in
// index.html, because a page opened from file:// may not fetch() another file.
// A card matches when it holds every word typed, as on the site's own search.
(function () {
  "use strict";
  var box = document.getElementById("search");
  var data = document.getElementById("search-index");
  var input = document.getElementById("q");
  var results = document.getElementById("search-results");
  var decks = document.getElementById("decks");
  if (!box || !data || !input || !results) return;
  var cards = JSON.parse(data.textContent);
  box.hidden = false;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  function show(query) {
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    results.textContent = "";
    if (decks) decks.hidden = words.length > 0;
    if (!words.length) return;
    var hits = cards.filter(function (card) {
      return words.every(function (word) { return card.text.indexOf(word) >= 0; });
    });
    var count = hits.length + " card" + (hits.length === 1 ? "" : "s");
    results.appendChild(element("h2", "", count + " match \u201c" + query.trim() + "\u201d"));
    if (!hits.length) {
      results.appendChild(element("p", "", "Nothing matches. Try a shorter word, or a tag."));
      return;
    }
    var list = element("ul", "card-list");
    hits.forEach(function (card) {
      var item = element("li");
      var link = element("a", "", card.title);
      link.href = card.url;
      item.appendChild(link);
      item.appendChild(element("p", "question", card.question));
      item.appendChild(element("p", "meta", card.meta));
      list.appendChild(item);
    });
    results.appendChild(list);
  }

  input.addEventListener("input", function () {
    show(input.value);
    try {
      // Keep the search in the address, so Back and a shared link return to it.
      var address = input.value ? "?q=" + encodeURIComponent(input.value) : window.location.pathname;
      history.replaceState(null, "", address);
    } catch (error) {
      // Some browsers refuse to change the address of a file:// page; searching still works.
    }
  });
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    input.value = query;
    show(query);
  }
})();

// Browsers do not break a formula across lines, so a long inline one scrolls in
// its own box at phone width (site.css). A box that scrolls must take keyboard
// focus (WCAG 2.1.1): give one to each formula that overflows, and only those.
(function () {
  "use strict";
  var pending = false;
  function mark() {
    pending = false;
    document.querySelectorAll("math:not([display='block'])").forEach(function (formula) {
      var scrolls = formula.scrollWidth > formula.clientWidth + 1;
      if (scrolls && !formula.hasAttribute("tabindex")) {
        formula.setAttribute("tabindex", "0");
        formula.setAttribute("data-scrolls", "");
      } else if (!scrolls && formula.hasAttribute("data-scrolls")) {
        formula.removeAttribute("tabindex");
        formula.removeAttribute("data-scrolls");
      }
    });
  }
  mark();
  window.addEventListener("resize", function () {
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(mark);
    }
  });
})();
