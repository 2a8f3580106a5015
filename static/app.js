// Quizlab's own script: keyboard shortcuts and focus after htmx swaps.
// Everything here is an enhancement: every form also works without it.
(function () {
  "use strict";

  function typing(target) {
    if (!target || !target.tagName) return false;
    var tag = target.tagName.toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" ||
      tag === "button" || tag === "summary" || tag === "a" || target.isContentEditable;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event.target)) return;
    var shortcut = document.querySelector("[data-shortcut='" + (event.key === " " ? "Space" : event.key) + "']");
    if (shortcut && !shortcut.disabled) {
      event.preventDefault();
      // A form that htmx has not wired up yet (the page is still loading) would
      // be sent as a plain form: wire it up first. Processing twice is a no-op.
      if (shortcut.form && window.htmx) window.htmx.process(shortcut.form);
      shortcut.click();
    }
  });

  // Every htmx request carries the session's CSRF token (app/web/middleware/csrf.py): state-changing
  // requests without it are refused. Plain forms send it in a hidden field instead.
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector("meta[name='csrf-token']");
    if (meta) event.detail.headers["X-CSRF-Token"] = meta.getAttribute("content");
  });

  // A visitor's first form starts their session, with a token of its own: the
  // answer names it in X-CSRF-Token, and every form on the page takes it.
  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    var token = xhr && xhr.getResponseHeader("X-CSRF-Token");
    if (!token) return;
    var meta = document.querySelector("meta[name='csrf-token']");
    if (meta) meta.setAttribute("content", token);
    document.querySelectorAll("input[name='csrf_token']").forEach(function (field) {
      field.value = token;
    });
  });

  // After a swap, move focus to the new content so keyboard and screen-reader
  // users continue from there instead of from a node that no longer exists.
  document.addEventListener("htmx:afterSettle", function () {
    var focus = document.querySelector("[data-autofocus]:not([data-focused])");
    if (focus) {
      focus.setAttribute("data-focused", "");
      focus.focus();
    }
  });
})();

// A formula wider than its line scrolls inside its own box (app.css). One that
// does gets a tab stop, so it can be scrolled from the keyboard too (WCAG 2.1.1);
// the others do not, or a card would have a hundred tab stops.
(function () {
  "use strict";
  var pending = false;
  function mark() {
    pending = false;
    document.querySelectorAll("math:not([display='block'])").forEach(function (formula) {
      if (formula.scrollWidth > formula.clientWidth + 1) {
        if (!formula.hasAttribute("tabindex")) {
          formula.setAttribute("tabindex", "0");
          formula.setAttribute("data-scrolls", "");
        }
      } else if (formula.hasAttribute("data-scrolls")) {
        formula.removeAttribute("tabindex");
        formula.removeAttribute("data-scrolls");
      }
    });
  }
  function soon() {
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(mark);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mark);
  } else {
    mark();
  }
  window.addEventListener("resize", soon);
  document.addEventListener("htmx:afterSettle", mark);
})();

// Stats: a chart wider than the screen starts scrolled to its latest end.
(function () {
  "use strict";
  function scrollToEnd() {
    document.querySelectorAll("[data-scroll-end]").forEach(function (box) {
      box.scrollLeft = box.scrollWidth;
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", scrollToEnd);
  } else {
    scrollToEnd();
  }
})();

// Print every follow-up's approach: open the closed ones for the printout, and
// close them again after (app.css prints the open ones; this covers browsers
// that cannot style a closed details element's content).
(function () {
  "use strict";
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (details) {
      details.open = true;
      opened.push(details);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (details) { details.open = false; });
    opened = [];
  });
})();

// Demo controls: a value its field does not allow is never sent (htmx checks the
// form first), so say what is wrong and what is allowed at the field, and mark
// the numbers below as those of the last settings that ran. A setting the worker
// refuses (too costly) comes back naming its field: the message goes there too.
(function () {
  "use strict";
  function hintOf(field) {
    var hint = document.getElementById(field.getAttribute("aria-describedby"));
    if (hint && !hint.hasAttribute("data-requirement")) {
      hint.setAttribute("data-requirement", hint.textContent);
    }
    return hint;
  }
  function say(field, problem) {
    var hint = hintOf(field);
    if (!hint) return;
    if (problem) {
      field.setAttribute("aria-invalid", "true");
      hint.classList.add("field-error");
      hint.textContent = problem;
    } else if (field.hasAttribute("aria-invalid")) {
      field.removeAttribute("aria-invalid");
      hint.classList.remove("field-error");
      hint.textContent = hint.getAttribute("data-requirement");
    }
  }
  function problemOf(field) {
    var validity = field.validity;
    if (validity.valid) return "";
    var allowed = "allowed: " + hintOf(field).getAttribute("data-requirement") + ".";
    if (validity.rangeOverflow) return field.value + " is too large; " + allowed;
    if (validity.rangeUnderflow) return field.value + " is too small; " + allowed;
    if (validity.stepMismatch) return field.value + " is not a whole number; " + allowed;
    return "Not a number; " + allowed;
  }
  function stale(form, yes) {
    var result = form.parentElement.querySelector(".demo-result");
    if (!result) return;
    var note = result.querySelector(".stale-note");
    if (yes && !note) {
      note = document.createElement("p");
      note.className = "stale-note";
      note.textContent = "Not run: these numbers are for the last settings that were allowed.";
      result.insertBefore(note, result.firstChild);
      result.setAttribute("data-stale", "");
    } else if (!yes && note) {
      note.remove();
      result.removeAttribute("data-stale");
    }
  }
  function check(form) {
    var bad = false;
    form.querySelectorAll("input[aria-describedby]").forEach(function (field) {
      var problem = problemOf(field);
      say(field, problem);
      if (problem) bad = true;
    });
    stale(form, bad);
    return bad;
  }
  function onEdit(event) {
    var form = event.target.closest && event.target.closest("form.demo-controls");
    if (form) check(form);
  }
  document.addEventListener("input", onEdit);
  document.addEventListener("change", onEdit);
  document.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll(".demo-error[data-field]:not([data-said])").forEach(function (refused) {
      refused.setAttribute("data-said", "");
      var field = document.getElementById(refused.getAttribute("data-field"));
      var message = refused.querySelector(".demo-error-message");
      if (field && message) say(field, message.textContent + ".");
    });
  });
})();
