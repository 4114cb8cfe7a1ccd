// The navigation's "Menu" under 800 px as a real button that says whether the menu is open
// (aria-expanded). base.html also has a checkbox and its label, which fold the menu without
// JavaScript; when this runs they are hidden (the `js-nav` class) and the button is shown.
(function () {
  "use strict";
  var button = document.querySelector(".topbar .nav-button");
  var nav = document.getElementById("site-nav");
  if (!button || !nav) return;
  document.documentElement.classList.add("js-nav");
  button.hidden = false;

  function setOpen(open) {
    button.setAttribute("aria-expanded", open ? "true" : "false");
    nav.classList.toggle("open", open);
  }

  button.addEventListener("click", function () {
    setOpen(button.getAttribute("aria-expanded") !== "true");
  });
  // Escape closes an open menu and gives the focus back to its button.
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      button.focus();
    }
  });
})();
