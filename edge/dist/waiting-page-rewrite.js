// GENERATED from edge/src by edge/build.mjs
function handler(r){var s=r.request;return/^\/vwr\/[A-Za-z0-9_-]{1,64}\/?$/.test(s.uri)&&"/vwr/assets"!==s.uri&&"/vwr/assets/"!==s.uri&&(s.uri="/vwr/index.html"),s}
