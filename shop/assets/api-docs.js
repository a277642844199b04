// Starts Swagger UI on the served document; no validator badge (it would call a server elsewhere).
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: document.body.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
