// CloudFront Function (runtime cloudfront-js-2.0, viewer request) for the waiting page's
// cache behavior (/vwr/*, S3 origin): /vwr/{eventId} (with or without a trailing slash) is
// served from the one static page, /vwr/index.html; the page reads the event id from the
// address bar. Assets live two segments deep (/vwr/assets/…) so they never look like an
// event id; everything else is left as it is.
//
// The page's address has one home, the page itself (static/assets/app.js, eventIdFrom): edge/build.mjs
// puts its pattern here, so the page is served exactly where it can read an event id.
var PAGE_PATH = /*@@VWR_PAGE_PATH@@*/ null;

function handler(event) {
  var request = event.request;
  if (PAGE_PATH.test(request.uri) && request.uri !== '/vwr/assets' && request.uri !== '/vwr/assets/') {
    request.uri = '/vwr/index.html';
  }
  return request;
}
