// jig registry catalog: progressive enhancement only. Every page works
// without this script: search is a plain GET form, commands are readable
// text fields.
"use strict";

(function () {
  // Search as you type: fetch the same page for the new query and swap the
  // results section in place.
  var form = document.getElementById("search-form");
  if (form && window.fetch && window.DOMParser) {
    var timer = null;
    var seq = 0;
    var update = function () {
      var params = new URLSearchParams();
      new FormData(form).forEach(function (v, k) { if (v !== "") params.append(k, v); });
      var url = form.action + (params.toString() ? "?" + params.toString() : "");
      var mine = ++seq;
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          if (mine !== seq) return; // a newer query is on its way
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.getElementById("results");
          var old = document.getElementById("results");
          if (fresh && old) {
            old.replaceWith(fresh);
            history.replaceState(null, "", url);
          }
        })
        .catch(function () { /* keep the current results; submitting still works */ });
    };
    var schedule = function () {
      clearTimeout(timer);
      timer = setTimeout(update, 200);
    };
    form.addEventListener("input", schedule);
    form.addEventListener("change", schedule);
  }

  // Copy buttons: shown only when the clipboard can be used.
  if (navigator.clipboard) {
    document.querySelectorAll("button.copy").forEach(function (btn) {
      btn.hidden = false;
      btn.addEventListener("click", function () {
        var field = document.getElementById(btn.getAttribute("data-copy"));
        if (!field) return;
        var status = document.querySelector(".copied");
        // A command field copies its value; a file's <code> its text
        // (the line numbers are CSS, not text, so they stay out).
        var text = "value" in field ? field.value : field.textContent;
        var label = btn.getAttribute("data-label") || text;
        navigator.clipboard.writeText(text).then(function () {
          btn.textContent = "Copied";
          if (status) status.textContent = "Copied: " + label;
          setTimeout(function () { btn.textContent = "Copy"; }, 1500);
        }, function () {
          if (field.select) field.select();
          if (status) status.textContent = "Select the text and copy it with your keyboard.";
        });
      });
    });
  }
})();
