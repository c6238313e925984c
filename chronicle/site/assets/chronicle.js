/* chronicle: swap each static chart SVG for an interactive vega-embed view, and make
   tables and code blocks that scroll sideways reachable by keyboard.
   The SVG stays when JavaScript is off (and in feeds); its alt text, the chart's
   description, names the live chart too. The vega bundle is served by the site itself
   (no CDN) and loaded only on pages that carry a chart. */
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

  function fetchSpec(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
  }

  /* Dark mode: vega's dark theme lightens axes, legends and titles, not the text marks a
     spec colours itself (marker and alert names, risk labels: dark grey for white pages).
     Those are drawn light, so they keep their contrast on the slate background. A
     name's outline (a text mark with a stroke and no fill: vega.py `halo`) takes the
     colour the chart is drawn on (its background is transparent), in either scheme, so
     it hides what runs behind the name without showing as a box. */
  var TEXT_ON_DARK = "#d4d4d4";
  function paintText(node, dark, back) {
    if (Array.isArray(node)) { node.forEach(function (n) { paintText(n, dark, back); }); return; }
    if (!node || typeof node !== "object") return;
    var mark = node.mark;
    if (mark === "text" && dark) node.mark = { type: "text", color: TEXT_ON_DARK };
    else if (mark && mark.type === "text") {
      if (mark.stroke) mark.stroke = back;
      /* The outline's own fill is not drawn (fill-opacity 0), but a contrast checker that
         reads the colour without its opacity measured it: it takes the words' colour. */
      if (dark) mark.color = TEXT_ON_DARK;
    }
    if (node.layer) paintText(node.layer, dark, back);
  }

  /* Dark mode: vega's dark theme draws grid lines #888, 5:1 on the slate page, brighter
     than a translucent band or the raw data under a smoothed line, which then seemed to
     vanish behind the grid. This grid keeps light mode's ~1.4:1 (#ddd on white). */
  var DARK_CONFIG = { axis: { gridColor: "#353944" } };

  function backdrop(el) {
    for (; el && el.nodeType === 1; el = el.parentElement) {
      var c = getComputedStyle(el).backgroundColor;
      if (c && c !== "transparent" && !/^rgba\(.*,\s*0\)$/.test(c)) return c;
    }
    return "#ffffff";
  }

  function draw(el) {
    var url = el.getAttribute("data-spec");
    var img = el.querySelector("img");
    var target = el.querySelector(".chronicle-vega");
    if (!target) {
      target = document.createElement("div");
      target.className = "chronicle-vega";
      el.appendChild(target);
    }
    var theme = dark() ? "dark" : "light";
    var options = { renderer: "svg", actions: false, mode: "vega-lite",
                    loader: { target: "_self" } };
    if (theme === "dark") { options.theme = "dark"; options.config = DARK_CONFIG; }
    return fetchSpec(url).then(function (spec) {
      paintText(spec, theme === "dark", backdrop(el));
      return window.vegaEmbed(target, spec, options);
    }).then(function () {
      var svg = target.querySelector("svg");
      if (svg && img && img.alt) {
        /* The live chart says what the static one says: what it shows, the latest value. */
        svg.setAttribute("role", "img");
        svg.setAttribute("aria-label", img.alt);
      }
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

  /* Material wraps tables in a box that scrolls sideways on a phone: a keyboard user must
     be able to focus it to scroll it. */
  var zh = (document.documentElement.lang || "").indexOf("zh") === 0;

  /* A region's name says which table it is (the heading above it): several regions of
     one name are landmarks a screen reader cannot tell apart. */
  function tableName(box, n) {
    for (var el = box.previousElementSibling; el; el = el.previousElementSibling) {
      if (/^H[1-6]$/.test(el.tagName)) {
        var words = el.textContent.replace(/[¶\s]+$/, "").trim();
        return zh ? "表格：" + words + "（可横向滚动）" : "Table: " + words + " (scrolls sideways)";
      }
    }
    return zh ? "表格 " + n + "（可横向滚动）" : "Table " + n + " (scrolls sideways)";
  }

  function scrollables() {
    var n = 0, used = {};
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        n += 1;
        var name = tableName(box, n);
        if (used[name]) name += " " + n;
        used[name] = true;
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", name);
      } else if (box.getAttribute("role") === "region") {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }

  /* Material makes a code block that scrolls sideways focusable only where the pointer
     can hover (matchMedia("(hover)")): on a phone, a keyboard or switch user could not
     reach the Cite box's BibTeX record to scroll it. Such a block is made a named region
     here, and kept focusable when Material takes its tabindex away on a resize. */
  function codeName(code, n) {
    var m = /(?:^|\s)language-([\w+-]+)/.exec(code.className);
    var what = m ? (m[1] === "bibtex" ? "BibTeX" : m[1]) : (zh ? "代码" : "Code");
    return zh ? what + "（可横向滚动）" + (n > 1 ? " " + n : "")
              : what + " (scrolls sideways)" + (n > 1 ? " " + n : "");
  }

  function scrollingCode() {
    var n = 0;
    document.querySelectorAll(".md-typeset pre > code").forEach(function (code) {
      if (code.scrollWidth > code.clientWidth + 1) {
        n += 1;
        if (code.getAttribute("tabindex") !== "0") code.setAttribute("tabindex", "0");
        code.setAttribute("role", "region");
        code.setAttribute("aria-label", codeName(code, n));
      } else if (code.getAttribute("role") === "region") {
        code.removeAttribute("tabindex");
        code.removeAttribute("role");
        code.removeAttribute("aria-label");
      }
    });
  }

  /* Search: a reader who types a sealed day's date (2026-11-09) is offered that day
     first. Material's search splits a query on "-" into 2026, 11 and 09, and every day
     whose title holds the three ties with it, the earliest listed first. The offer links
     the day's page only once the site answers for it (a date never sealed offers
     nothing); the results below stay Material's. */
  var editionRoot = here.replace(/assets\/javascripts\/chronicle\.js(\?.*)?$/, "");
  var DATE = /^\s*(\d{4}-\d{2}-\d{2})\s*$/;

  function dayOffer(input) {
    var results = document.querySelector(".md-search-result");
    var old = document.querySelector(".chronicle-search-day");
    if (old) old.parentNode.removeChild(old);
    var m = DATE.exec(input.value);
    if (!m || !results || !window.fetch) return;
    var date = m[1];
    var url = editionRoot + "days/" + date + ".html";
    fetch(url, { method: "HEAD" }).then(function (r) {
      var now = DATE.exec(input.value);
      if (!r.ok || !now || now[1] !== date || document.querySelector(".chronicle-search-day")) {
        return;
      }
      var p = document.createElement("p");
      p.className = "chronicle-search-day";
      var a = document.createElement("a");
      a.href = url;
      a.textContent = zh ? "查看 " + date + " 的条目 →" : "The entry of " + date + " →";
      p.appendChild(a);
      results.insertBefore(p, results.firstChild);
    }).catch(function () { /* offline or refused: no offer */ });
  }

  function onPage() {
    drawAll();
    setTimeout(function () { scrollables(); scrollingCode(); }, 50); /* after Material's own */
  }

  function start() {
    if (window.document$ && typeof window.document$.subscribe === "function") {
      /* Material instant navigation replaces the page without reloading scripts */
      window.document$.subscribe(onPage);
    } else {
      onPage();
    }
    window.addEventListener("resize", scrollables);
    window.addEventListener("resize", scrollingCode);
    /* Material sets or removes a code block's tabindex after each of its size changes. */
    new MutationObserver(function (changes) {
      for (var i = 0; i < changes.length; i++) {
        var el = changes[i].target;
        if (el.tagName === "CODE" && el.getAttribute("role") === "region" &&
            !el.hasAttribute("tabindex")) scrollingCode();
      }
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["tabindex"] });
    document.addEventListener("input", function (e) {
      var t = e.target;
      if (t && t.classList && t.classList.contains("md-search__input")) dayOffer(t);
    });
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
