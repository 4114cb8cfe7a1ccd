// The Copy button of a new token's secret. Without JavaScript the button stays hidden and the
// secret sits in a read-only field to select by hand; htmx swaps the section in, so the
// button is found by delegation and shown after every swap.
(function () {
  "use strict";

  function showButtons() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
    });
  }

  function said(button, text) {
    var out = button.parentElement.querySelector(".copy-said");
    if (out) out.textContent = text;
  }

  function selectAndCopy(field, button) {
    // Where the clipboard API is missing or refused (plain http, an old browser).
    field.focus();
    field.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (e) {
      copied = false;
    }
    said(button, copied ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.");
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) return;
    var field = document.querySelector(button.getAttribute("data-copy"));
    if (!field) return;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(
        function () { said(button, "Copied."); },
        function () { selectAndCopy(field, button); }
      );
    } else {
      selectAndCopy(field, button);
    }
  });

  document.addEventListener("DOMContentLoaded", showButtons);
  document.addEventListener("htmx:afterSettle", showButtons);
})();
