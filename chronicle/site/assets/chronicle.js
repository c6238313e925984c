/* chronicle: each chart shows its static SVG, and becomes an interactive vega-embed view
   when a reader reaches for it (the pointer on it, a tap, a click, keyboard focus); tables
   and code blocks that scroll sideways are made reachable by keyboard.
   The vega bundle (served by the site itself, no CDN; the heaviest file a page can ask
   for) is fetched only then: a page paints with its own bytes, its SVGs and Material's,
   as a page without charts does, and a reader who only reads never downloads it.
   The SVG stays when JavaScript is off (and in feeds); its alt text, the chart's
   description, names the chart while it is static and the live chart after. */
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
    var focused = false;
    return fetchSpec(url).then(function (spec) {
      paintText(spec, theme === "dark", backdrop(el));
      /* Drawing replaces the SVG: a reader focused on the chart (the static one, the live
         one or a heatmap cell's link) stays on it. */
      focused = el.contains(document.activeElement);
      return window.vegaEmbed(target, spec, options);
    }).then(function () {
      var svg = target.querySelector("svg");
      if (svg) {
        /* The live chart says what the static one says: what it shows, the latest value;
           it is the chart's stop in the tab order, as the static one was. */
        svg.setAttribute("role", "img");
        if (img && img.alt) svg.setAttribute("aria-label", img.alt);
        svg.setAttribute("tabindex", "0");
        if (focused) svg.focus({ preventScroll: true });
      }
      el.classList.add("chronicle-chart--live");
      el.setAttribute("data-theme", theme);
      el.removeAttribute("tabindex");
      el.removeAttribute("role");
      el.removeAttribute("aria-label");
    }).catch(function (err) {
      /* keep the static SVG: it is the same chart */
      el.classList.add("chronicle-chart--static");
      console.warn("chronicle: chart " + url + " stays static: " + err);
    });
  }

  /* A static chart is a stop in the tab order, named by its description (the SVG's alt
     text), so a keyboard reader reaches it and focusing it draws the live chart. */
  function offer(el) {
    if (el.classList.contains("chronicle-chart--live") || el.hasAttribute("tabindex")) return;
    var img = el.querySelector("img");
    el.setAttribute("tabindex", "0");
    el.setAttribute("role", "img");
    if (img && img.alt) el.setAttribute("aria-label", img.alt);
  }

  function offerAll() {
    document.querySelectorAll(".chronicle-chart[data-spec]").forEach(offer);
  }

  /* The reader reached for a chart: load the bundle (once a page) and draw it live. */
  function wake(el) {
    if (el.classList.contains("chronicle-chart--live") ||
        el.classList.contains("chronicle-chart--static") ||
        el.classList.contains("chronicle-chart--waking")) return;
    el.classList.add("chronicle-chart--waking");
    loadBundle().then(function () { return draw(el); }, function (err) {
      el.classList.add("chronicle-chart--static");
      console.warn(String(err));
    }).then(function () { el.classList.remove("chronicle-chart--waking"); });
  }

  function reached(e) {
    var el = e.target && e.target.closest ? e.target.closest(".chronicle-chart[data-spec]") : null;
    if (el) wake(el);
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

  /* Search: what Material's ranking misses, offered above its results (the results
     below stay the engine's own).
     - A day by its date, in the forms readers type: 2026-10-17, 2026/10/17,
       2026年10月17日, 10月17日, 第59天, day 59. Material splits "2026-10-17" into 2026, 10
       and 17 (every day holding the three ties with it) and jieba splits 10月17日 into
       four words; only a sealed day is offered (the days come from api/index.json).
     - Pages holding a Chinese word whole: Material segments a Han query with the words
       of its index but never tries the whole query as one word, so "上下文" becomes
       上下* and 文* and ranks pages holding 上下 and 文 apart above the pages that say
       上下文. The offer lists the pages that hold it whole, most occurrences first,
       read from the engine's own index (Material's search/search_index.json, which its
       worker has already fetched, or Zensical's search.json). */
  /* The Chinese edition loads the site's one chronicle.js (mkdocs) or its own copy
     (Zensical builds each edition apart): its days and index are under zh/ either way. */
  var scriptRoot = here.replace(/assets\/javascripts\/chronicle\.js(\?.*)?$/, "");
  var siteRoot = scriptRoot.replace(/zh\/$/, "");
  var editionRoot = zh ? siteRoot + "zh/" : siteRoot;
  var HAN = /[\u3400-\u9fff\uf900-\ufaff]{2,}/;
  var cached = {};

  function getJson(urls) {
    var key = urls.join(" ");
    if (!cached[key]) {
      cached[key] = urls.reduce(function (prior, url) {
        return prior.catch(function () {
          return fetch(url).then(function (r) {
            if (!r.ok) throw new Error(url + ": HTTP " + r.status);
            return r.json();
          });
        });
      }, Promise.reject(new Error("start")));
      cached[key].catch(function () { delete cached[key]; });
    }
    return cached[key];
  }

  function pad(n) { return (n < 10 ? "0" : "") + Number(n); }

  /* What the query names: {date}, {month, day} (a year left out) or {n} (a day number). */
  function named(query) {
    var q = query.replace(/\s+/g, " ").trim(), m;
    if ((m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(q)) ||
        (m = /^(\d{4}) ?年 ?(\d{1,2}) ?月 ?(\d{1,2}) ?[日号]?$/.exec(q))) {
      return { date: m[1] + "-" + pad(m[2]) + "-" + pad(m[3]) };
    }
    if ((m = /^(\d{1,2}) ?月 ?(\d{1,2}) ?[日号]$/.exec(q))) {
      return { month: pad(m[1]), day: pad(m[2]) };
    }
    if ((m = /^第 ?(\d{1,4}) ?天$/.exec(q)) || (m = /^day (\d{1,4})$/i.exec(q))) {
      return { n: Number(m[1]) };
    }
    return null;
  }

  function sealedDay(want, days) {
    var found = days.filter(function (d) {
      if (want.date) return d.date === want.date;
      if (want.n) return d.day === want.n;
      return d.date.slice(5) === want.month + "-" + want.day;
    });
    return found.length ? found[found.length - 1] : null; /* a month-day: the newest year */
  }

  function longDate(date) {
    var p = date.split("-");
    return zh ? p[0] + "年" + Number(p[1]) + "月" + Number(p[2]) + "日" : date;
  }

  function offerBox(className, label) {
    var box = document.createElement("div");
    box.className = "chronicle-search-offer " + className;
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", label);
    return box;
  }

  function place(box) {
    var results = document.querySelector(".md-search-result");
    if (!results) return;
    var old = results.querySelector("." + box.className.split(" ").pop());
    if (old) old.parentNode.removeChild(old);
    var day = results.querySelector(".chronicle-search-day");
    /* the day first, then the whole word, then the engine's results */
    results.insertBefore(box, day && box !== day ? day.nextSibling : results.firstChild);
  }

  function clear() {
    document.querySelectorAll(".chronicle-search-offer").forEach(function (el) {
      el.parentNode.removeChild(el);
    });
  }

  function dayOffer(input, query) {
    var want = named(query);
    if (!want) return;
    getJson([siteRoot + "api/index.json"]).then(function (index) {
      var day = sealedDay(want, index.days || []);
      if (!day || input.value !== query) return;
      var box = offerBox("chronicle-search-day", zh ? "日期对应的条目" : "The day of that date");
      var a = document.createElement("a");
      a.href = editionRoot + "days/" + day.date + ".html";
      a.textContent = zh
        ? "第 " + day.day + " 天 · " + longDate(day.date) + " 的条目 →"
        : "Day " + day.day + " · the entry of " + day.date + " →";
      box.appendChild(a);
      place(box);
    }).catch(function () { /* offline or refused: no offer */ });
  }

  function flat(text) {
    return String(text || "").replace(/<[^>]*>/g, "").replace(/[\u200b\s]+/g, "")
      .replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"').replace(/&#0?39;/g, "'").toLowerCase();
  }

  function count(text, word) {
    var n = 0, at = text.indexOf(word);
    while (at >= 0) { n += 1; at = text.indexOf(word, at + word.length); }
    return n;
  }

  function wholeWordOffer(input, query) {
    var word = flat(query);
    if (!HAN.test(word)) return;
    getJson([editionRoot + "search/search_index.json", editionRoot + "search.json"])
      .then(function (index) {
        if (input.value !== query) return;
        var pages = {}, order = [];
        (index.docs || index.items || []).forEach(function (doc) {
          var page = String(doc.location || "").split("#")[0];
          if (!(page in pages)) { pages[page] = { title: "", href: "", n: 0 }; order.push(page); }
          var entry = pages[page];
          if (String(doc.location).indexOf("#") < 0) entry.title = doc.title;
          var n = count(flat(doc.title), word) + count(flat(doc.text), word);
          if (n && !entry.href) entry.href = doc.location;
          entry.n += n;
        });
        var found = order.filter(function (p) { return pages[p].n > 0; })
          .sort(function (a, b) { return pages[b].n - pages[a].n; });
        if (!found.length) return;
        var box = offerBox("chronicle-search-whole",
          zh ? "含完整词语“" + query.trim() + "”的页面" : 'Pages with "' + query.trim() + '" whole');
        var head = document.createElement("p");
        head.textContent = zh
          ? "含完整词语“" + query.trim() + "”的页面（" + found.length + " 页）："
          : 'Pages with "' + query.trim() + '" as one word (' + found.length + "):";
        box.appendChild(head);
        var list = document.createElement("ul");
        found.slice(0, 5).forEach(function (p) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          a.href = editionRoot + pages[p].href;
          a.textContent = String(pages[p].title || p).replace(/\u200b/g, "").replace(/<[^>]*>/g, "");
          li.appendChild(a);
          li.appendChild(document.createTextNode(zh ? "（" + pages[p].n + " 处）" : " (" + pages[p].n + ")"));
          list.appendChild(li);
        });
        box.appendChild(list);
        place(box);
      }).catch(function () { /* no index: no offer */ });
  }

  function offers(input) {
    clear();
    if (!window.fetch || !document.querySelector(".md-search-result")) return;
    dayOffer(input, input.value);
    wholeWordOffer(input, input.value);
  }

  function onPage() {
    offerAll();
    setTimeout(function () { scrollables(); scrollingCode(); }, 50); /* after Material's own */
  }

  function start() {
    if (window.document$ && typeof window.document$.subscribe === "function") {
      /* Material instant navigation replaces the page without reloading scripts */
      window.document$.subscribe(onPage);
    } else {
      onPage();
    }
    /* Hover, a touch, a click, keyboard focus: whichever comes first wakes the chart (a
       tap on a phone sends a touch, then focus and a click). Listening on the document
       keeps working when Material's instant navigation swaps the page. */
    ["pointerover", "pointerdown", "focusin", "click"].forEach(function (type) {
      document.addEventListener(type, reached, true);
    });
    document.addEventListener("touchstart", reached, { capture: true, passive: true });
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
      if (t && t.classList && t.classList.contains("md-search__input")) offers(t);
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

/* Since you last read: the home page lists what the ledger told on the newest days (each
   item dated by when it was published: its day's sealing, a correction's finding); this
   shows the reader only those published since their last visit. What was seen is kept
   in this browser alone (localStorage: no cookie, no request), and only moves on when
   something new is published, so reloading the page shows the same list. */
(function () {
  "use strict";
  function key() { return "chronicle:seen:" + location.pathname.replace(/(index\.html)?$/, ""); }

  function read() {
    try { return JSON.parse(window.localStorage.getItem(key()) || "null"); } catch (e) { return null; }
  }

  function write(value) {
    try { window.localStorage.setItem(key(), JSON.stringify(value)); } catch (e) { /* off */ }
  }

  function show(box) {
    var items = Array.prototype.slice.call(box.querySelectorAll("[data-published]"));
    if (!items.length) return;
    var newest = items.map(function (li) { return li.getAttribute("data-published"); }).sort().pop();
    var seen = read();
    if (!seen || !seen.newest) { write({ newest: newest, before: newest }); return; }
    if (seen.newest !== newest) { seen = { newest: newest, before: seen.newest }; write(seen); }
    var since = seen.before;
    var fresh = 0;
    items.forEach(function (li) {
      var shown = li.getAttribute("data-published") > since;
      li.hidden = !shown;
      if (shown) fresh += 1;
    });
    var ymd = since.slice(0, 10).split("-");
    var zh = (document.documentElement.lang || "").indexOf("zh") === 0;
    var when = zh ? ymd[0] + "年" + Number(ymd[1]) + "月" + Number(ymd[2]) + "日" : ymd.join("-");
    var said = box.querySelector(".chronicle-since__said");
    if (said) said.textContent = (fresh ? box.getAttribute("data-some") : box.getAttribute("data-none"))
      .replace("{date}", when).replace("{n}", String(fresh));
    box.hidden = false;
  }

  function start() {
    document.querySelectorAll("[data-chronicle-since]").forEach(show);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(start);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
