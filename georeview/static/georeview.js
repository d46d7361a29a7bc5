/* georeview: popups and tooltips built with DOM text nodes (never innerHTML), so text that
 * comes from a submission or a reference layer is shown as text and never parsed as HTML.
 * georeview.info[key] = {label, lines: [str], fields: [[column, label]], findings: [...],
 * no_findings: str} is written by georeview/webmap.py for each map layer. MIT licence (georeview). */
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

  /* A legend control: items = [{label, stroke, fill, line, dash}]. */
  function legend(map, items) {
    var control = L.control({ position: "bottomleft" });
    control.onAdd = function () {
      var box = el("div", null, "gr-legend leaflet-control");
      box.id = "georeview-legend";
      box.appendChild(el("b", "Legend"));
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
          sw.style.background = it.fill;
          if (!it.point && it.opacity) { sw.style.opacity = Math.max(it.opacity, 0.35); }
        }
        if (it.dash) { sw.style.borderStyle = "dashed"; }
        row.appendChild(sw);
        row.appendChild(document.createTextNode(it.label));
        box.appendChild(row);
      });
      L.DomEvent.disableClickPropagation(box);
      L.DomEvent.disableScrollPropagation(box);
      return box;
    };
    control.addTo(map);
    return control;
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
    patterns: patterns, printScale: printScale, hit: hit, features: FEATURES
  };
})(window);
