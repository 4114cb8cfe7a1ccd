// An htmx request that fails on the server (5xx) or never reaches it says so in the message
// area (#flash), and the page it came from stays as it was. base.html's htmx-config does not
// swap 5xx answers; the error page of spaceduck.core.pages asks for #flash (HX-Retarget), so
// it is let through. Any other 5xx (a proxy, a server that is down) gets a line written here.
(function () {
  "use strict";

  function say(text) {
    var flash = document.getElementById("flash");
    if (!flash) return;
    var line = document.createElement("p");
    line.className = "flash flash-error";
    line.setAttribute("role", "alert");
    line.textContent = text;
    flash.replaceChildren(line);
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status < 500) return;
    if (xhr.getResponseHeader("HX-Retarget") === "#flash") {
      event.detail.shouldSwap = true; // our own error message, for the message area
      return;
    }
    say("The server answered " + xhr.status + " " + xhr.statusText +
        ": reload the page to see what was saved.");
  });

  document.addEventListener("htmx:sendError", function () {
    say("The server could not be reached: nothing was sent. Try again when it is back.");
  });
})();
