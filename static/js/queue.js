// The review queues (candidates, notes, conflicts; the viewer's candidates too). After a
// decision the focus moves to the next item still waiting instead of dropping to <body>. In
// the queues marked data-shortcuts, j and k move between the waiting items, a approves and r
// rejects the item that has the focus (or holds it: one of its buttons), ? lists the keys.
//
// The markup: the queue is [data-queue="name"], its items [data-queue-item] (each with an
// id), an item's decision buttons [data-action="approve" | "reject" | ...]; an item with no
// such button is decided. htmx swaps the whole queue or just the decided item, so every
// element is looked up again after a swap, by id.
(function () {
  "use strict";
  var ITEM = "[data-queue-item]";
  var pending = null; // the decision under way: { queue, item, order } as they were when clicked
  var currentId = null; // the last item focused: where j and k go on from
  var dialog = null;

  function all(queue) {
    return Array.prototype.slice.call(queue.querySelectorAll(ITEM));
  }

  function waiting(item) {
    return item.querySelector("[data-action]:not([disabled])") !== null;
  }

  function queueNamed(name) {
    return document.querySelector('[data-queue="' + name + '"]');
  }

  function focusItem(item) {
    item.setAttribute("tabindex", "-1");
    item.focus();
    currentId = item.id;
  }

  // The item that has the focus or holds it: the one a and r decide, never one out of sight.
  function focusedItem(queue) {
    var active = document.activeElement;
    var item = active && active.closest ? active.closest(ITEM) : null;
    return item && queue.contains(item) ? item : null;
  }

  // A decision (or the bulk buttons, or Undo) inside a queue: remember where it was taken.
  document.addEventListener(
    "click",
    function (event) {
      var button = event.target.closest ? event.target.closest("button") : null;
      var queue = button ? button.closest("[data-queue]") : null;
      if (!queue) return;
      var item = button.closest(ITEM);
      pending = {
        queue: queue.getAttribute("data-queue"),
        item: item ? item.id : null,
        order: all(queue).map(function (el) { return el.id; }),
        undo: button.closest(".undo") !== null,
      };
    },
    true
  );

  // Where the focus goes once the answer is in: the same item if it still waits (the
  // decision failed: into the field it refused, when it says which), else the next waiting
  // one after it, else the one before it, else any, else the decided item itself (a list
  // that keeps it, saying what was decided), else the queue (it says that nothing waits).
  function settle(done) {
    var queue = queueNamed(done.queue);
    if (!queue) return;
    // An Undo: the first item it brought back, in its place in the list.
    var back = done.undo ? all(queue).filter(function (el) {
      return done.order.indexOf(el.id) < 0 && waiting(el);
    }) : [];
    if (back.length) return focusItem(back[0]);
    var at = done.item ? done.order.indexOf(done.item) : -1;
    var ids = at < 0 ? done.order : [done.item].concat(
      done.order.slice(at + 1), done.order.slice(0, at).reverse()
    );
    for (var i = 0; i < ids.length; i++) {
      var item = document.getElementById(ids[i]);
      if (!item || !queue.contains(item) || !waiting(item)) continue;
      var refused = ids[i] === done.item ? item.querySelector('[aria-invalid="true"]') : null;
      if (!refused) return focusItem(item);
      currentId = item.id;
      return refused.focus();
    }
    var left = all(queue).filter(waiting);
    if (left.length) return focusItem(left[0]);
    var decided = done.item ? document.getElementById(done.item) : null;
    if (decided && queue.contains(decided)) return focusItem(decided);
    queue.setAttribute("tabindex", "-1");
    queue.focus();
  }

  document.addEventListener("htmx:afterSettle", function () {
    if (!pending) return;
    var done = pending;
    pending = null;
    // After this request's other swaps (the flash message, the nav counts) have settled too.
    window.setTimeout(function () { settle(done); }, 0);
  });

  // --- Shortcuts -------------------------------------------------------------------------

  var KEYS = [
    ["j", "next item"],
    ["k", "previous item"],
    ["a", "approve (accept) the item"],
    ["r", "reject the item"],
    ["?", "show these shortcuts"],
  ];

  function typing(target) {
    if (!target || !target.closest) return false;
    if (target.closest("textarea, select, [contenteditable]")) return true;
    var input = target.closest("input");
    return input !== null && !/^(checkbox|radio|button|submit|reset)$/.test(input.type);
  }

  function move(queue, step) {
    var items = all(queue);
    var current = focusedItem(queue) || (currentId && document.getElementById(currentId));
    var at = current ? items.indexOf(current) : -1;
    if (at < 0) at = step > 0 ? -1 : items.length;
    for (var i = at + step; i >= 0 && i < items.length; i += step) {
      if (waiting(items[i])) return focusItem(items[i]);
    }
  }

  function act(queue, action) {
    var current = focusedItem(queue);
    var button = current ? current.querySelector('[data-action="' + action + '"]') : null;
    if (button && !button.disabled) button.click();
  }

  function showHelp() {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.className = "shortcuts";
      dialog.setAttribute("aria-labelledby", "shortcuts-title");
      var rows = KEYS.map(function (key) {
        return "<dt><kbd>" + key[0] + "</kbd></dt><dd>" + key[1] + "</dd>";
      }).join("");
      dialog.innerHTML =
        '<h2 id="shortcuts-title">Keyboard shortcuts</h2><dl>' + rows + "</dl>" +
        '<form method="dialog"><button type="submit">Close</button></form>';
      document.body.appendChild(dialog);
    }
    if (!dialog.open) dialog.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target) || (dialog && dialog.open)) return;
    var queue = document.querySelector("[data-queue][data-shortcuts]");
    if (!queue) return;
    var handled = true;
    if (event.key === "j") move(queue, 1);
    else if (event.key === "k") move(queue, -1);
    else if (event.key === "a") act(queue, "approve");
    else if (event.key === "r") act(queue, "reject");
    else if (event.key === "?") showHelp();
    else handled = false;
    if (handled) event.preventDefault();
  });

  // Say that the keys exist: a button after the page's heading on the queues that have them.
  document.addEventListener("DOMContentLoaded", function () {
    var heading = document.querySelector("main h1");
    if (!heading || !document.querySelector("[data-queue][data-shortcuts]")) return;
    var hint = document.createElement("p");
    hint.className = "shortcuts-hint";
    hint.innerHTML =
      '<button type="button">Keyboard shortcuts</button> ' +
      '<span class="sub"><kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> approve, ' +
      "<kbd>r</kbd> reject, <kbd>?</kbd> lists them</span>";
    hint.querySelector("button").addEventListener("click", showHelp);
    heading.insertAdjacentElement("afterend", hint);
  });
})();
