/* Django's own admin markup that axe-core finds fault with, put right where Django builds it
   in the browser (tests/browser/test_admin_accessibility_browser.py). */
'use strict';
/* The search icon of a filter_horizontal box (SelectFilter2.js) is a <span> with an
   aria-label, which a span may not have (aria-prohibited-attr, serious); as an image it may,
   and it names the filter input its <label> is for. SelectFilter2 builds the boxes on
   "load", in a listener added while the page was parsed, so before this deferred script's. */
window.addEventListener('load', function() {
    document.querySelectorAll('.search-label-icon[aria-label]:not([role])').forEach(function(icon) {
        icon.setAttribute('role', 'img');
    });
});
