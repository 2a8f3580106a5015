// Mock interview: the clocks count on from the times the server wrote into the
// page, and the answer box says when a save did not reach the server.
// Without this script the page still shows each time as of when it loaded,
// and every button saves the answer.
(function () {
  "use strict";

  var clock = document.querySelector("[data-clock-now]");
  if (!clock) return;
  // The server's clock, not the device's: only the elapsed time is taken from here.
  var skew = Number(clock.getAttribute("data-clock-now")) - Date.now();

  function text(seconds) {
    var minutes = Math.floor(seconds / 60);
    var rest = seconds % 60;
    return minutes + ":" + (rest < 10 ? "0" : "") + rest;
  }

  function tick() {
    var now = Date.now() + skew;
    document.querySelectorAll("[data-since]").forEach(function (element) {
      element.textContent = text(Math.max(0, Math.floor((now - Number(element.getAttribute("data-since"))) / 1000)));
    });
    document.querySelectorAll("[data-until]").forEach(function (element) {
      var left = Math.max(0, Math.floor((Number(element.getAttribute("data-until")) - now) / 1000));
      element.textContent = text(left);
      if (left === 0) {
        var notice = document.querySelector("[data-time-up]");
        if (notice) notice.hidden = false;
      }
    });
  }
  tick();
  window.setInterval(tick, 1000);

  // A save that never arrived (a dropped connection): say so; the next keystroke
  // or any button sends the whole answer again.
  document.addEventListener("htmx:sendError", function (event) {
    if (!event.target || event.target.id !== "interview-answer") return;
    var status = document.getElementById("save-status");
    if (status) {
      status.className = "save-status form-error";
      status.setAttribute("role", "alert");
      status.textContent = "Not saved: the connection dropped. Keep typing, or press Save, to try again.";
    }
  });
})();
