// The console's own script: small helps on top of pages that work without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // ask before a form that cannot be undone (rotate secret, sign out of nothing else)
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
  // a changed status filter applies at once (the Apply button stays for keyboards and no-JS)
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // a delivery or a sent message still in flight: look again in a few seconds (the page works without it: reload)
  var live = document.querySelector("[data-refresh]");
  if (live) {
    var seconds = Number(live.getAttribute("data-refresh")) || 3;
    // never throw away what someone is typing (a reply while a sent message is in flight): wait
    var typing = function () {
      return Array.prototype.some.call(document.querySelectorAll("textarea, input[type=text]"), function (field) {
        return field.value !== field.defaultValue;
      });
    };
    var look = function () {
      if (document.hidden || typing()) window.setTimeout(look, seconds * 1000);
      else window.location.reload();
    };
    window.setTimeout(look, seconds * 1000);
  }
  // select the shown-once secret on focus so it can be copied in one go
  document.querySelectorAll(".secret").forEach(function (box) {
    box.addEventListener("focus", function () {
      var range = document.createRange();
      range.selectNodeContents(box);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    });
  });
  // drag and drop onto a form the page already has: `drop(item, target)` fills the dragged item's
  // own form for the target and submits it (the forms work without this; keyboards use them)
  var dragToSubmit = function (items, targets, drop) {
    var dragged = null;
    document.querySelectorAll(items).forEach(function (item) {
      item.addEventListener("dragstart", function (event) {
        if (event.target !== item) return;  // a field inside it being dragged, not the item
        dragged = item;
        item.classList.add("dragging");
        event.dataTransfer.effectAllowed = "move";
        event.dataTransfer.setData("text/plain", item.id);
      });
      item.addEventListener("dragend", function () {
        item.classList.remove("dragging");
        dragged = null;
      });
    });
    document.querySelectorAll(targets).forEach(function (target) {
      target.addEventListener("dragover", function (event) {
        if (!dragged) return;
        event.preventDefault();
        event.dataTransfer.dropEffect = "move";
        target.classList.add("drop-target");
      });
      target.addEventListener("dragleave", function (event) {
        if (!target.contains(event.relatedTarget)) target.classList.remove("drop-target");
      });
      target.addEventListener("drop", function (event) {
        event.preventDefault();
        target.classList.remove("drop-target");
        if (dragged) drop(dragged, target);
      });
    });
  };
  // the queue board: a card dropped on another column posts its Move form with that status
  dragToSubmit(".ticket-card[draggable=true]", ".board .column[data-status]", function (card, column) {
    if (column.contains(card)) return;
    var form = card.querySelector("form.move");
    form.querySelector("select[name=status]").value = column.getAttribute("data-status");
    var list = column.querySelector(".cards");
    if (list) list.appendChild(card);
    form.submit();
  });
  // the Calendar: an appointment dropped on a slot posts its Move form with that day and time
  dragToSubmit(".appointment[draggable=true]", ".slot[data-date][data-time]", function (item, slot) {
    var form = document.getElementById("move-" + item.getAttribute("data-appointment"));
    if (!form) return;
    form.querySelector("input[name=scheduled_date]").value = slot.getAttribute("data-date");
    form.querySelector("input[name=scheduled_time]").value = slot.getAttribute("data-time");
    item.classList.add("moving");
    form.submit();
  });
});
