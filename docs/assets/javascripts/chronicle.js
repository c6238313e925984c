/* chronicle: swap each static chart SVG for an interactive vega-embed view.
   The SVG stays when JavaScript is off (and in feeds). The vega bundle is served by the
   site itself (no CDN) and loaded only on pages that carry a chart. */
(function () {
  "use strict";
  var here = document.currentScript ? document.currentScript.src : "";
  var bundleUrl = here.replace(/chronicle\.js(\?.*)?$/, "vega-bundle.js");
  var loading = null;

  function loadBundle() {
    if (window.vegaEmbed) return Promise.resolve();
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = bundleUrl;
        s.onload = resolve;
        s.onerror = function () { reject(new Error("chronicle: cannot load " + bundleUrl)); };
        document.head.appendChild(s);
      });
    }
    return loading;
  }

  function dark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  function draw(el) {
    var url = el.getAttribute("data-spec");
    var target = el.querySelector(".chronicle-vega");
    if (!target) {
      target = document.createElement("div");
      target.className = "chronicle-vega";
      el.appendChild(target);
    }
    var theme = dark() ? "dark" : "light";
    var options = { renderer: "svg", actions: false, mode: "vega-lite" };
    if (theme === "dark") options.theme = "dark";
    return window.vegaEmbed(target, url, options).then(function () {
      el.classList.add("chronicle-chart--live");
      el.setAttribute("data-theme", theme);
    }).catch(function (err) {
      /* keep the static SVG: it is the same chart */
      console.warn("chronicle: chart " + url + " stays static: " + err);
    });
  }

  function drawAll() {
    var charts = document.querySelectorAll(".chronicle-chart[data-spec]");
    if (!charts.length) return;
    loadBundle().then(function () {
      charts.forEach(draw);
    }).catch(function (err) { console.warn(String(err)); });
  }

  function start() {
    if (window.document$ && typeof window.document$.subscribe === "function") {
      /* Material instant navigation replaces the page without reloading scripts */
      window.document$.subscribe(drawAll);
    } else {
      drawAll();
    }
    /* redraw when the reader toggles light/dark */
    new MutationObserver(function () {
      document.querySelectorAll(".chronicle-chart--live").forEach(draw);
    }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
