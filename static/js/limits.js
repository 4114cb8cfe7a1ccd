// The live counter under a limited field: "n / max" as one types or pastes, counted as the
// server counts (spaceduck.core.limits): code points for data-maxchars (an emoji is one,
// where a browser's maxlength would count two UTF-16 units), UTF-8 bytes for data-maxbytes.
// Nothing is cut or blocked here: an over-long text reaches the server, which refuses it
// with the same words as the API. Without JavaScript there is no counter and the same refusal.
// htmx swaps forms in (an edit form with its errors), so fields are found again after a swap.
(function () {
  "use strict";

  var encoder = new TextEncoder();

  function count(field, bytes) {
    return bytes ? encoder.encode(field.value).length : Array.from(field.value).length;
  }

  function update(field) {
    var out = field._spaceduckCounter;
    if (!out) return;
    var bytes = field.hasAttribute("data-maxbytes");
    var max = Number(field.getAttribute(bytes ? "data-maxbytes" : "data-maxchars"));
    var n = count(field, bytes);
    var unit = bytes ? " bytes" : "";
    var over = n > max;
    out.textContent =
      n.toLocaleString("en") + " / " + max.toLocaleString("en") + unit +
      (over ? ": " + (n - max).toLocaleString("en") + " over the limit, it will not be saved" : "");
    out.classList.toggle("over", over);
    // A text box always shows its count; a one-line field (an id, a namespace) once it nears
    // its limit, so a filter row is not a column of "0 / 255". Never by focus: a counter that
    // appears or hides as a field gains or loses focus moves the page under the pointer, and
    // the click meant for the next control (a checkbox, a button) lands elsewhere.
    out.hidden = field.tagName !== "TEXTAREA" && n < 0.8 * max;
    if (over) field.setAttribute("aria-invalid", "true");
    else if (!field.closest(".has-error")) field.removeAttribute("aria-invalid");
  }

  function attach(root) {
    var fields = (root || document).querySelectorAll("[data-maxchars], [data-maxbytes]");
    fields.forEach(function (field) {
      if (field._spaceduckCounter || field.type === "hidden") return;
      var out = document.createElement("span");
      out.className = "char-count";
      // Read with the field (aria-describedby), not announced at every key: a live region
      // here would speak each new count while one types.
      out.id = (field.id || field.name) + "-count";
      field.insertAdjacentElement("afterend", out);
      var described = field.getAttribute("aria-describedby");
      field.setAttribute("aria-describedby", described ? described + " " + out.id : out.id);
      field._spaceduckCounter = out;
      update(field);
    });
  }

  function onEvent(event) {
    if (event.target && event.target._spaceduckCounter) update(event.target);
  }

  document.addEventListener("input", onEvent);
  document.addEventListener("DOMContentLoaded", function () {
    attach(document);
  });
  document.addEventListener("htmx:load", function (event) {
    attach(event.target);
  });
})();
