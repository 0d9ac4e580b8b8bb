// GENERATED from edge/src by edge/build.mjs
var r=/^\/vwr\/([A-Za-z0-9_-]{1,64})\/?$/,e=/^\/vwr\/queue\/([A-Za-z0-9_-]{1,64})\/?$/;function handler(u){var t=u.request;return r.test(t.uri)&&"/vwr/assets"!==t.uri&&"/vwr/assets/"!==t.uri?t.uri="/vwr/index.html":e.test(t.uri)&&(t.uri="/vwr/queue/index.html"),t}
