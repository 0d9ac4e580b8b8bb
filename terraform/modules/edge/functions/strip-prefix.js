// vwr: CloudFront Function (cloudfront-js-2.0, viewer request) on the /vwr-api/* behavior.
// The tier-1 API is served under /vwr-api behind CloudFront (docs/api.md#layout-behind-cloudfront) but its routes are
// /vwr/assign/… and /vwr/check/…: remove the prefix, keep everything else (the query string is
// a separate field of the event and is passed on untouched).
function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri === '/vwr-api') {
    request.uri = '/';
  } else if (uri.indexOf('/vwr-api/') === 0) {
    request.uri = uri.substring(8);
  }
  return request;
}
