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
  // the queue board: a card dropped on another column posts its own Move form with that status
  // (the form works without this; keyboards use the select and the button)
  var dragged = null;
  document.querySelectorAll(".ticket-card[draggable=true]").forEach(function (card) {
    card.addEventListener("dragstart", function (event) {
      dragged = card;
      card.classList.add("dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", card.getAttribute("data-ticket"));
    });
    card.addEventListener("dragend", function () {
      card.classList.remove("dragging");
      dragged = null;
    });
  });
  document.querySelectorAll(".board .column[data-status]").forEach(function (column) {
    column.addEventListener("dragover", function (event) {
      if (!dragged) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      column.classList.add("drop-target");
    });
    column.addEventListener("dragleave", function (event) {
      if (!column.contains(event.relatedTarget)) column.classList.remove("drop-target");
    });
    column.addEventListener("drop", function (event) {
      event.preventDefault();
      column.classList.remove("drop-target");
      if (!dragged || column.contains(dragged)) return;
      var form = dragged.querySelector("form.move");
      var select = form.querySelector("select[name=status]");
      select.value = column.getAttribute("data-status");
      var list = column.querySelector(".cards");
      if (list) list.appendChild(dragged);
      form.submit();
    });
  });
  // the Calendar: an appointment dropped on a slot posts its own Move form with that day and time
  // (the form works without this; keyboards open Move and press its button)
  var moving = null;
  document.querySelectorAll(".appointment[draggable=true]").forEach(function (item) {
    item.addEventListener("dragstart", function (event) {
      if (event.target !== item) return;  // a field inside it being dragged, not the appointment
      moving = item;
      item.classList.add("dragging");
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", item.getAttribute("data-appointment"));
    });
    item.addEventListener("dragend", function () {
      item.classList.remove("dragging");
      moving = null;
    });
  });
  document.querySelectorAll(".slot[data-date][data-time]").forEach(function (slot) {
    slot.addEventListener("dragover", function (event) {
      if (!moving) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      slot.classList.add("drop-target");
    });
    slot.addEventListener("dragleave", function (event) {
      if (!slot.contains(event.relatedTarget)) slot.classList.remove("drop-target");
    });
    slot.addEventListener("drop", function (event) {
      event.preventDefault();
      slot.classList.remove("drop-target");
      if (!moving) return;
      var form = document.getElementById("move-" + moving.getAttribute("data-appointment"));
      if (!form) return;
      form.querySelector("input[name=scheduled_date]").value = slot.getAttribute("data-date");
      form.querySelector("input[name=scheduled_time]").value = slot.getAttribute("data-time");
      moving.classList.add("moving");
      form.submit();
    });
  });
});
