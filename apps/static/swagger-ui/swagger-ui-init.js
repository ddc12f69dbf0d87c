// battlejudge's set-up of the vendored Swagger UI for /docs (this file is ours, not Swagger
// UI's): the settings FastAPI's default page writes inline, moved here because the service's
// Content-Security-Policy runs no inline script.
"use strict";

window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
});
