// CloudFront Function (runtime cloudfront-js-2.0, viewer request) for the waiting page's
// cache behavior (/vwr/*, S3 origin): /vwr/{eventId} (with or without a trailing slash) is
// served from the one static page, /vwr/index.html, and the booking page's address
// /vwr/queue/{eventId} from /vwr/queue/index.html (docs/adr/0027-booking-page-path.md); the
// pages read the event id from the address bar. Assets live two segments deep (/vwr/assets/…,
// /vwr/queue/tier2.js: a dot is never in an event id) so they never look like one; everything
// else is left as it is.
//
// Each page's address has one home, the page itself (eventIdFrom in static/src/app/rules.js
// and static/src/tier2/client.js, built into static/assets/app.js and static/queue/tier2.js):
// edge/build.mjs puts their patterns here, so each page is served exactly where it can read an
// event id.
var PAGE_PATH = /*@@VWR_PAGE_PATH@@*/ null;
var BOOKING_PATH = /*@@VWR_BOOKING_PATH@@*/ null;

function handler(event) {
  var request = event.request;
  if (PAGE_PATH.test(request.uri) && request.uri !== '/vwr/assets' && request.uri !== '/vwr/assets/') {
    request.uri = '/vwr/index.html';
  } else if (BOOKING_PATH.test(request.uri)) {
    request.uri = '/vwr/queue/index.html';
  }
  return request;
}
