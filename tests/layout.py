"""Layout checks the browser tests share."""

from playwright.sync_api import Page

# The outermost elements that stick out past the right edge of the viewport and
# are not inside a box that scrolls or clips them: what makes the page scroll sideways.
_STICKING_OUT = """() => {
  const width = window.innerWidth;
  const found = [];
  for (const element of document.body.querySelectorAll("*")) {
    if (element.getBoundingClientRect().right <= width + 0.5) continue;
    let parent = element.parentElement, inside = false;
    while (parent && parent !== document.body) {
      if (getComputedStyle(parent).overflowX !== "visible"
          || parent.getBoundingClientRect().right > width + 0.5) { inside = true; break; }
      parent = parent.parentElement;
    }
    if (!inside) found.push(element.outerHTML.slice(0, 120));
  }
  return {overflow: document.documentElement.scrollWidth - width, found: found.slice(0, 5)};
}"""


def no_horizontal_scroll(page: Page, what: str = "page") -> None:
    """The page does not scroll sideways; the message names what sticks out."""
    result = page.evaluate(_STICKING_OUT)
    assert result["overflow"] <= 0, (
        f"{what} scrolls sideways by {result['overflow']}px: {result['found']}"
    )
