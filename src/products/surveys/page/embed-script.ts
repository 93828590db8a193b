// The embed widget, served as {APP_URL}/embed.js. A site adds
//   <script src="https://<app>/embed.js" data-survey="<slug>" async></script>
// and gets the hosted survey in an iframe, inline (default) or behind a button as a popover
// (data-mode="popover"), sized to its content. When a response completes, the host page gets
// a `edge-survey:completed` DOM event (detail: {slug, response_id}) on window and on the
// container, besides the raw postMessage {source: "edge-survey", type: "response.completed", ...}.
export const EMBED_SCRIPT = String.raw`(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.getAttribute("data-survey")) return;
  var origin = new URL(script.src, window.location.href).origin;
  var slug = script.getAttribute("data-survey");
  var mode = script.getAttribute("data-mode") === "popover" ? "popover" : "inline";
  var target = script.getAttribute("data-target") ? document.querySelector(script.getAttribute("data-target")) : null;

  var container = document.createElement("div");
  container.className = "edge-survey-embed";
  container.setAttribute("data-survey", slug);
  if (target) target.appendChild(container); else script.parentNode.insertBefore(container, script.nextSibling);

  function frame() {
    var iframe = document.createElement("iframe");
    iframe.src = origin + "/s/" + encodeURIComponent(slug) + "?embed=1";
    iframe.title = script.getAttribute("data-title") || "Survey";
    iframe.setAttribute("loading", "lazy");
    iframe.style.cssText = "width:100%;border:0;display:block;height:420px;transition:height .15s";
    return iframe;
  }

  var iframe;
  if (mode === "inline") {
    iframe = frame();
    container.appendChild(iframe);
  } else {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = script.getAttribute("data-button-label") || "Take the survey";
    button.className = "edge-survey-open";
    var overlay = document.createElement("div");
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-modal", "true");
    overlay.setAttribute("aria-label", script.getAttribute("data-title") || "Survey");
    overlay.style.cssText = "position:fixed;inset:0;background:rgba(0,0,0,.45);display:none;align-items:center;justify-content:center;z-index:2147483000;padding:16px";
    var panel = document.createElement("div");
    panel.style.cssText = "background:#fff;border-radius:12px;width:100%;max-width:640px;max-height:90vh;overflow:auto;position:relative";
    var close = document.createElement("button");
    close.type = "button";
    close.setAttribute("aria-label", "Close survey");
    close.textContent = "×";
    close.style.cssText = "position:absolute;top:6px;right:10px;border:0;background:none;font-size:24px;cursor:pointer;z-index:1";
    iframe = frame();
    panel.appendChild(close);
    panel.appendChild(iframe);
    overlay.appendChild(panel);
    document.body.appendChild(overlay);
    function hide() { overlay.style.display = "none"; button.focus(); }
    button.addEventListener("click", function () { overlay.style.display = "flex"; close.focus(); });
    close.addEventListener("click", hide);
    overlay.addEventListener("click", function (e) { if (e.target === overlay) hide(); });
    document.addEventListener("keydown", function (e) { if (e.key === "Escape" && overlay.style.display !== "none") hide(); });
    container.appendChild(button);
  }

  window.addEventListener("message", function (event) {
    var data = event.data;
    if (event.origin !== origin || event.source !== iframe.contentWindow || !data || data.source !== "edge-survey" || data.slug !== slug) return;
    if (data.type === "resize" && typeof data.height === "number") {
      iframe.style.height = Math.max(120, Math.min(data.height, 4000)) + "px";
    } else if (data.type === "response.completed") {
      var detail = { slug: slug, response_id: data.response_id };
      container.dispatchEvent(new CustomEvent("edge-survey:completed", { detail: detail, bubbles: true }));
      window.dispatchEvent(new CustomEvent("edge-survey:completed", { detail: detail }));
      if (typeof data.redirect_url === "string" && /^https?:\/\//.test(data.redirect_url)) {
        setTimeout(function () { window.location.href = data.redirect_url; }, 3000);
      }
    }
  });
})();
`;
