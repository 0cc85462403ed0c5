// Renders /openapi.json with Swagger UI, served by the gateway itself (no CDN: a depot may be offline).
// validatorUrl null: Swagger UI would otherwise send the document to an outside validator service.
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#api-docs',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
