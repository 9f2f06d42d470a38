// Dripline dashboard: refreshes the parts of a page marked data-live every data-refresh seconds
// (the page is fetched again and those parts replaced), asks before a data-confirm form is sent,
// submits a data-autosubmit select when it changes, and withdraws the new-run form's Start button
// once a field changed after the dry run.
(function () {
  'use strict';
  function refresh() {
    var seconds = Number(document.body.getAttribute('data-refresh') || 0);
    if (!seconds || !document.querySelector('[data-live]')) { return; }
    setInterval(function () {
      if (document.hidden) { return; }
      fetch(window.location.href, { credentials: 'same-origin', cache: 'no-store' })
        .then(function (response) {
          if (response.redirected || !response.ok) { return null; }
          return response.text();
        })
        .then(function (html) {
          if (!html) { return; }
          var fresh = new DOMParser().parseFromString(html, 'text/html');
          document.querySelectorAll('[data-live]').forEach(function (part) {
            if (!part.id || part.contains(document.activeElement)) { return; }
            var replacement = fresh.getElementById(part.id);
            if (replacement) { part.replaceWith(document.importNode(replacement, true)); }
          });
        })
        .catch(function () { /* the next tick tries again */ });
    }, seconds * 1000);
  }
  document.addEventListener('submit', function (event) {
    var message = event.target.getAttribute('data-confirm');
    if (message && !window.confirm(message)) { event.preventDefault(); }
  });
  document.addEventListener('change', function (event) {
    if (event.target.hasAttribute('data-autosubmit')) { event.target.form.submit(); }
    if (event.target.form && event.target.form.id === 'run-form') {
      var start = document.getElementById('start');
      if (start) { start.remove(); }
    }
  });
  document.addEventListener('DOMContentLoaded', refresh);
})();
