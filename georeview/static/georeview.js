/* georeview: popups and tooltips built with DOM text nodes (never innerHTML), so text that
 * comes from a submission or a reference layer is shown as text and never parsed as HTML.
 * georeview.info[key] = {label, lines: [str], fields: [[column, label]], findings: [...],
 * no_findings: str} is written by georeview/webmap.py for each map layer. Besides the popups:
 * the legend, the title, the north arrow, the contour labels, "show my location" and the
 * phone layout, all georeview's own (no plugin). MIT licence (georeview). */
(function (root) {
  "use strict";
  var STATUS = {
    fail: "fails",
    needs_info: "needs information",
    pass: "passes",
    not_applicable: "not applicable"
  };

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function popup(info, props) {
    var box = el("div", null, "gr-popup");
    box.appendChild(el("div", info.label, "gr-title"));
    var grp = props && props._gr_group && info.groups && info.groups[props._gr_group];
    // a grouped layer's feature says which group (symbol) it is: a floodway, say
    if (grp && grp.label) { box.appendChild(el("div", grp.label, "gr-group")); }
    (info.lines || []).forEach(function (t) { box.appendChild(el("div", t, "gr-line")); });
    var fields = info.fields || [];
    if (fields.length && props) {
      var table = el("table", null, "gr-attrs");
      fields.forEach(function (f) {
        var v = props[f[0]];
        if (v === undefined || v === null || v === "") { return; }
        var tr = el("tr");
        tr.appendChild(el("th", f[1]));
        tr.appendChild(el("td", v));
        table.appendChild(tr);
      });
      if (table.childNodes.length) { box.appendChild(table); }
    }
    var findings = info.findings || [], note = info.no_findings;
    var group = props && props._gr_group && info.groups && info.groups[props._gr_group];
    if (group) { findings = group.findings || []; note = group.note; }
    if (findings.length) {
      var ul = el("ul", null, "gr-findings");
      findings.forEach(function (f) {
        var li = el("li", null, "gr-finding gr-" + f.status);
        li.appendChild(el("span", f.citation, "gr-cite"));
        li.appendChild(el("span", f.label || STATUS[f.status] || f.status, "gr-status gr-s-" + f.status));
        li.appendChild(document.createTextNode(f.message));
        ul.appendChild(li);
      });
      box.appendChild(ul);
    } else if (note) {
      box.appendChild(el("div", note, "gr-note"));
    }
    return box;
  }

  /* Every bound feature, so that a click can list all the features under it. */
  var FEATURES = [];
  var lastClick = null;

  function inRing(p, ring) {
    var inside = false;
    for (var i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      var a = ring[i], b = ring[j];
      if ((a.y > p.y) !== (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) {
        inside = !inside;
      }
    }
    return inside;
  }

  /* Whether the feature drawn as `layer` is under container point `p` (even-odd rule
   * over every ring for areas; within 6 px of a line; within its radius of a point). */
  function hit(map, layer, p) {
    if (!map.hasLayer(layer)) { return false; }
    if (layer instanceof L.CircleMarker) {
      return map.latLngToContainerPoint(layer.getLatLng()).distanceTo(p) <= layer.getRadius() + 4;
    }
    if (layer instanceof L.Marker) {
      return map.latLngToContainerPoint(layer.getLatLng()).distanceTo(p) <= 12;
    }
    if (!(layer instanceof L.Polyline)) { return false; }
    var rings = [];
    (function flat(x) {
      if (x.length && x[0] instanceof L.LatLng) { rings.push(x); } else { x.forEach(flat); }
    })(layer.getLatLngs());
    var isArea = layer instanceof L.Polygon;
    var inside = false;
    for (var r = 0; r < rings.length; r++) {
      var pts = rings[r].map(function (ll) { return map.latLngToContainerPoint(ll); });
      if (isArea && layer.options.fill !== false && inRing(p, pts)) { inside = !inside; }
      for (var k = 1; k < pts.length + (isArea ? 1 : 0); k++) {
        var a = pts[k - 1], b = pts[k % pts.length];
        if (L.LineUtil.pointToSegmentDistance(p, a, b) <= 6) { return true; }
      }
    }
    return inside;
  }

  /* The popup of a click: the feature clicked first, then every other feature under
   * the click (topmost first), each under its own heading, so that no layer's popup
   * is hidden beneath another layer. */
  function popupAt(map, layer, feature, key) {
    var info = root.georeview.info[key] || { label: key };
    var first = popup(info, (feature && feature.properties) || {});
    if (!lastClick) { return first; }
    var p = lastClick;
    lastClick = null;
    var others = FEATURES.filter(function (f) {
      return f.layer !== layer && hit(map, f.layer, p);
    }).reverse();
    if (!others.length) { return first; }
    var box = el("div", null, "gr-popup gr-stack");
    box.appendChild(first);
    box.appendChild(el("div", "Also here (" + others.length + "):", "gr-also"));
    others.forEach(function (f) {
      var d = el("details", null, "gr-other");
      var info2 = root.georeview.info[f.key] || { label: f.key };
      d.appendChild(el("summary", info2.label));
      d.appendChild(popup(info2, (f.feature && f.feature.properties) || {}));
      box.appendChild(d);
    });
    return box;
  }

  /* Bind the popup and tooltip of one feature layer (called from folium's onEachFeature). */
  function bind(layer, feature, key) {
    var info = root.georeview.info[key] || { label: key };
    FEATURES.push({ layer: layer, feature: feature, key: key });
    layer.on("add", function () {
      var map = layer._map;
      if (map && !map._georeviewClicks) {
        map._georeviewClicks = true;
        // "preclick" fires before the clicked layer opens its popup: remember where.
        map.on("preclick", function (e) { lastClick = e.containerPoint; });
      }
    });
    layer.bindPopup(function () {
      return popupAt(layer._map, layer, feature, key);
    }, { maxWidth: 460 });
    layer.bindTooltip(function () { return document.createTextNode(info.label); }, { sticky: true });
    var props = (feature && feature.properties) || {};
    if (key === "contours" && info.labels && !info._labelled) {
      // One label group for the whole layer, shown while its lines are: every feature
      // of a GeoJSON layer is added and removed with it (the layer list's checkbox).
      info._labelled = true;
      var group = contourLabels(info.labels);
      layer.on("add", function () { if (layer._map) { group.addTo(layer._map); } });
      layer.on("remove", function () { group.remove(); });
    }
    if (key === "receiving" && props.name) {
      var d = props.distance_ft ? ", " + props.distance_ft + " ft downstream" : "";
      layer.bindTooltip(document.createTextNode(props.name + d), {
        permanent: true, direction: "right", className: "gr-label"
      });
      // A permanent tooltip bound before its layer is on the map is not opened by
      // Leaflet when a GeoJSON group adds it; open it once it is there.
      layer.on("add", function () { layer.openTooltip(); });
    }
  }

  /* The contours' elevation labels: labels = [[lat, lon, "646 ft"]], placed at a sparse
   * set of points along the lines by georeview/report/map_data.py. Not interactive, so a
   * click on a label reaches the features beneath it. */
  function contourLabels(labels) {
    var group = L.layerGroup();
    labels.forEach(function (l) {
      var span = el("span", l[2], "gr-contour-text");
      L.marker([l[0], l[1]], {
        icon: L.divIcon({ className: "gr-contour-label", html: span, iconSize: null }),
        interactive: false, keyboard: false
      }).addTo(group);
    });
    return group;
  }

  /* Hatching patterns referenced as fill "url(#gr-hatch-<key>)" by the styles of
   * overlapping area layers. defs = [{key, kind: diag|anti|cross, color}]. */
  function patterns(defs) {
    var NS = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", "0"); svg.setAttribute("height", "0");
    svg.setAttribute("aria-hidden", "true");
    svg.style.position = "absolute";
    var d = document.createElementNS(NS, "defs");
    defs.forEach(function (p) {
      var pat = document.createElementNS(NS, "pattern");
      pat.setAttribute("id", "gr-hatch-" + p.key);
      pat.setAttribute("patternUnits", "userSpaceOnUse");
      pat.setAttribute("width", "8"); pat.setAttribute("height", "8");
      var angle = p.kind === "anti" ? -45 : 45;
      pat.setAttribute("patternTransform", "rotate(" + angle + ")");
      var bg = document.createElementNS(NS, "rect");
      bg.setAttribute("width", "8"); bg.setAttribute("height", "8");
      bg.setAttribute("fill", p.color); bg.setAttribute("fill-opacity", "0.12");
      pat.appendChild(bg);
      var lines = p.kind === "cross" ? [[0, 4, 8, 4], [4, 0, 4, 8]] : [[0, 4, 8, 4]];
      lines.forEach(function (c) {
        var ln = document.createElementNS(NS, "line");
        ln.setAttribute("x1", c[0]); ln.setAttribute("y1", c[1]);
        ln.setAttribute("x2", c[2]); ln.setAttribute("y2", c[3]);
        ln.setAttribute("stroke", p.color); ln.setAttribute("stroke-width", "2");
        ln.setAttribute("stroke-opacity", "0.8");
        pat.appendChild(ln);
      });
      d.appendChild(pat);
    });
    svg.appendChild(d);
    (document.body || document.documentElement).appendChild(svg);
  }

  /* "1 in = N ft" at the map's centre for a page printed at 100 % (96 CSS px per inch),
   * kept current as the map moves: the printed map's stated scale. */
  function printScale(map) {
    var control = L.control({ position: "bottomright" });
    control.onAdd = function () {
      var box = el("div", null, "gr-print-scale leaflet-control");
      box.id = "georeview-scale";
      function update() {
        var s = map.getSize();
        if (!s.x || !s.y) { return; }
        var y = s.y / 2;
        var m = map.distance(map.containerPointToLatLng([s.x / 2 - 48, y]),
                             map.containerPointToLatLng([s.x / 2 + 48, y]));
        var ft = m / 0.3048;
        box.textContent = "Scale 1 in = " + (ft >= 100 ? Math.round(ft).toLocaleString("en-US") : ft.toFixed(1)) +
          " ft when printed at 100 %";
      }
      map.on("zoomend moveend resize", update);
      setTimeout(update, 0);
      return box;
    };
    control.addTo(map);
    return control;
  }

  /* A legend control: items = [{label, stroke, fill, line, dash}]. Its heading is a
   * button that folds the rows away (closed at first on a phone, see responsive). */
  function legend(map, items) {
    var control = L.control({ position: "bottomleft" });
    control.onAdd = function () {
      var box = el("div", null, "gr-legend leaflet-control");
      box.id = "georeview-legend";
      var head = el("button", "Legend", "gr-legend-toggle");
      head.type = "button";
      head.setAttribute("aria-expanded", "true");
      head.addEventListener("click", function () {
        setOpen(box, box.classList.contains("gr-closed"));
      });
      box.appendChild(head);
      var rows = el("div", null, "gr-legend-rows");
      box.appendChild(rows);
      items.forEach(function (it) {
        var row = el("div", null, "gr-legend-item");
        var sw = el("span", null, it.point ? "gr-point-swatch" : (it.line ? "gr-line-swatch" : "gr-swatch"));
        sw.style.borderColor = it.stroke;
        if (it.pattern) {
          var a = it.pattern === "anti" ? "-45deg" : "45deg";
          var g = "repeating-linear-gradient(" + a + ", " + it.fill + " 0 2px, transparent 2px 5px)";
          sw.style.background = it.pattern === "cross"
            ? g + ", repeating-linear-gradient(-45deg, " + it.fill + " 0 2px, transparent 2px 5px)" : g;
        } else if (!it.line || it.point) {
          // The swatch shows the fill as drawn: at its opacity over the map's background.
          // an outline-only area (opacity 0: a 0.2 % flood zone) keeps an empty swatch
          sw.style.background = it.point || it.opacity ? it.fill : "transparent";
          if (!it.point && it.opacity) { sw.style.opacity = Math.max(it.opacity, 0.35); }
        }
        if (it.dash) { sw.style.borderStyle = "dashed"; }
        row.appendChild(sw);
        row.appendChild(document.createTextNode(it.label));
        rows.appendChild(row);
      });
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.disableScrollPropagation(box);
      return box;
    };
    control.addTo(map);
    return control;
  }

  /* Open or close a foldable control (the legend). */
  function setOpen(box, open) {
    box.classList.toggle("gr-closed", !open);
    var head = box.querySelector(".gr-legend-toggle");
    if (head) { head.setAttribute("aria-expanded", open ? "true" : "false"); }
  }

  /* The map's title at the top centre: lines = [submission, ordinance], as text. */
  function title(map, lines) {
    var corners = map._controlCorners;
    if (!corners.topcenter) {
      corners.topcenter = L.DomUtil.create("div", "leaflet-top gr-topcenter", map._controlContainer);
    }
    var control = L.control({ position: "topcenter" });
    control.onAdd = function () {
      var box = el("div", null, "gr-map-title leaflet-control");
      box.id = "georeview-title";
      box.appendChild(el("div", lines[0], "gr-map-title-name"));
      if (lines[1]) { box.appendChild(el("div", lines[1], "gr-map-title-sub")); }
      box.title = lines.join("\n");
      L.DomEvent.disableClickPropagation(box);
      return box;
    };
    control.addTo(map);
    return control;
  }

  /* A north arrow. Leaflet draws the map north up (Web Mercator, never rotated), so
   * the arrow points straight up. */
  function northArrow(map) {
    var NS = "http://www.w3.org/2000/svg";
    var control = L.control({ position: "bottomright" });
    control.onAdd = function () {
      var box = el("div", null, "gr-north leaflet-control");
      box.id = "georeview-north";
      box.setAttribute("role", "img");
      box.setAttribute("aria-label", "North arrow: north is up");
      var svg = document.createElementNS(NS, "svg");
      svg.setAttribute("width", "26"); svg.setAttribute("height", "38");
      svg.setAttribute("viewBox", "0 0 26 38");
      var left = document.createElementNS(NS, "path");
      left.setAttribute("d", "M13 2 L4 30 L13 24 Z"); left.setAttribute("fill", "#000");
      var right = document.createElementNS(NS, "path");
      right.setAttribute("d", "M13 2 L22 30 L13 24 Z"); right.setAttribute("fill", "#fff");
      right.setAttribute("stroke", "#000"); right.setAttribute("stroke-width", "1.2");
      var n = document.createElementNS(NS, "text");
      n.setAttribute("x", "13"); n.setAttribute("y", "37.5"); n.setAttribute("text-anchor", "middle");
      n.setAttribute("font-size", "10"); n.setAttribute("font-weight", "700");
      n.setAttribute("font-family", "system-ui, sans-serif");
      n.textContent = "N";
      svg.appendChild(left); svg.appendChild(right); svg.appendChild(n);
      box.appendChild(svg);
      return box;
    };
    control.addTo(map);
    return control;
  }

  /* "Show my location": the browser's own position (navigator.geolocation through
   * Leaflet's map.locate), asked for only when the button is pressed; the browser asks
   * the user. Nothing is fetched and the position stays in the page. */
  function locate(map) {
    var control = L.control({ position: "topleft" });
    var shown = null;
    control.onAdd = function () {
      var box = el("div", null, "leaflet-bar leaflet-control gr-locate");
      var a = el("a", "\u25CE", "gr-locate-button");
      a.href = "#"; a.title = "Show my location"; a.setAttribute("role", "button");
      a.setAttribute("aria-label", "Show my location");
      var msg = el("div", null, "gr-locate-msg");
      box.appendChild(a); box.appendChild(msg);
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.on(a, "click", function (e) {
        L.DomEvent.preventDefault(e);
        msg.textContent = "";
        box.classList.add("gr-locating");
        map.locate({ setView: true, maxZoom: 18, enableHighAccuracy: true });
      });
      map.on("locationfound", function (e) {
        box.classList.remove("gr-locating");
        if (shown) { shown.remove(); }
        var ft = Math.round(e.accuracy / 0.3048);
        shown = L.layerGroup([
          L.circle(e.latlng, { radius: e.accuracy, color: "#1a73e8", weight: 1, fillOpacity: 0.12, interactive: false }),
          L.circleMarker(e.latlng, { radius: 7, color: "#fff", weight: 2, fillColor: "#1a73e8", fillOpacity: 1 })
            .bindTooltip(document.createTextNode("You are here (within about " + ft.toLocaleString("en-US") + " ft)"))
        ]).addTo(map);
        shown.eachLayer(function (l) { if (l.getElement) { var x = l.getElement(); if (x) { x.classList.add("gr-you"); } } });
      });
      map.on("locationerror", function (e) {
        box.classList.remove("gr-locating");
        msg.textContent = "Location not available: " + (e.message || "refused");
      });
      return box;
    };
    control.addTo(map);
    return control;
  }

  /* The phone layout: at 600 px wide or less the layer list and the legend start
   * closed, each behind its button (the layer list's own toggle; the legend's
   * heading), so that the map is not hidden under them. Wider, they start open.
   * A map embedded in a page (report.html's iframe, some 560 px wide on a desktop)
   * is narrow only on a narrow screen: there the page around it is the desktop's. */
  var NARROW = "(max-width: 600px)";
  function isNarrow(media) {
    if (!media || !media.matches) { return false; }
    var embedded = root.self !== root.top;
    return !embedded || !root.screen || root.screen.width <= 600;
  }
  function responsive(map, layers) {
    var legendBox = document.getElementById("georeview-legend");
    var media = root.matchMedia ? root.matchMedia(NARROW) : null;
    function apply(narrow) {
      if (layers) {
        // a closed list stays closed when layers are toggled (Leaflet re-opens a list
        // that is not "collapsed" on every change), and a map click closes it
        layers.options.collapsed = narrow;
        if (narrow) { layers.collapse(); } else { layers.expand(); }
      }
      if (legendBox) { setOpen(legendBox, !narrow); }
      map.getContainer().classList.toggle("gr-narrow", narrow);
    }
    if (layers) {
      map.on("click", function () { if (layers.options.collapsed) { layers.collapse(); } });
    }
    apply(isNarrow(media));
    if (media) {
      var change = function () { apply(isNarrow(media)); };
      if (media.addEventListener) { media.addEventListener("change", change); } else { media.addListener(change); }
    }
  }

  // Fit the map to the site once its container has a size. A map in an iframe (the
  // report embeds one) or in a hidden tab may be laid out after its script runs, and
  // fitting a 0x0 map gives NaN coordinates; wait for the first real size instead.
  function fit(map, bounds, padding) {
    var b = L.latLngBounds(bounds);
    var opts = { padding: L.point(padding[0], padding[1]) };
    function sized() {
      var s = map.getSize();
      return s.x > 0 && s.y > 0;
    }
    function go() {
      map.invalidateSize(false);
      map.fitBounds(b, opts);
    }
    if (sized()) { go(); return; }
    map.setView(b.getCenter(), 15);
    var box = map.getContainer();
    if (typeof ResizeObserver !== "undefined") {
      var ro = new ResizeObserver(function () {
        if (box.clientWidth > 0 && box.clientHeight > 0) { ro.disconnect(); go(); }
      });
      ro.observe(box);
    } else {
      root.addEventListener("load", go);
    }
  }

  root.georeview = {
    info: {}, el: el, popup: popup, bind: bind, legend: legend, fit: fit, STATUS: STATUS,
    patterns: patterns, printScale: printScale, hit: hit, features: FEATURES,
    title: title, northArrow: northArrow, locate: locate, responsive: responsive,
    contourLabels: contourLabels, setOpen: setOpen
  };
})(window);
