// The analyzer page's only script: it draws the pictures from the JSON data blocks that
// `html.rs` writes (so a 256-element run stays far below 100 KB instead of carrying an
// SVG element per lane and step) and answers hovers in the info bar. Nothing is fetched;
// the one URL below is the SVG namespace, which names and loads nothing.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var info = document.getElementById("info");
  var COLOUR = { ".": "#e8e8e8", a: "#4a7fc1", T: "#3aa55d", N: "#f0a030" };
  var STATE = { ".": "inactive", a: "active", T: "took the branch", N: "did not take the branch" };

  function svgEl(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function figure(box, caption) {
    var f = document.createElement("figure");
    var c = document.createElement("figcaption");
    c.textContent = caption;
    box.appendChild(f);
    f.appendChild(c);
    return f;
  }
  function say(text) {
    info.textContent = text;
  }
  function plural(n, word) {
    return n + " " + word + (n == 1 ? "" : "s");
  }

  // Warp × step strips. d.palette holds each distinct lane pattern of a step as a string
  // of one letter per lane ('.' inactive, 'a' active, 'T' took the branch, 'N' did not);
  // each warp is a flat list of (source line, palette index) pairs, one pair per step.
  function warps(box, d) {
    var cw = 4, ch = 4, lanes = d.lanes;
    d.warps.forEach(function (flat, w) {
      var steps = flat.length / 2;
      if (!steps) return;
      var width = steps * cw, height = lanes * ch + 8;
      var fig = figure(box, "warp " + w + ": " + plural(steps, "step"));
      var svg = svgEl("svg", {
        width: Math.min(width, 1400), height: height, viewBox: "0 0 " + width + " " + height,
        preserveAspectRatio: "none", "class": "warp", "data-warp": w
      });
      fig.insertBefore(svg, fig.firstChild);
      svgEl("rect", { y: 8, width: width, height: lanes * ch, fill: COLOUR.a }, svg);
      // Runs of one state become one stroke per colour; active is the background.
      var paths = { ".": "", T: "", N: "" }, perLane = [];
      for (var l = 0; l < lanes; l++) {
        var start = 0, prev = null, y = 8 + l * ch + ch / 2, n = { a: 0, T: 0, N: 0 };
        for (var k = 0; k <= steps; k++) {
          var s = k < steps ? d.palette[flat[2 * k + 1]][l] : null;
          if (s && s != ".") {
            n.a++;
            if (s != "a") n[s]++;
          }
          if (k == steps || s != prev) {
            if (prev && prev != "a") paths[prev] += "M" + start * cw + " " + y + "h" + (k - start) * cw;
            start = k;
            prev = s;
          }
        }
        perLane.push(n);
      }
      for (var c in paths)
        if (paths[c]) svgEl("path", { stroke: COLOUR[c], "stroke-width": ch, d: paths[c] }, svg);
      // A red mark above each step where the warp's lanes went both ways.
      for (k = 0; k < steps; k++) {
        var p = d.palette[flat[2 * k + 1]];
        if (p.indexOf("T") >= 0 && p.indexOf("N") >= 0)
          svgEl("rect", { x: k * cw, width: cw, height: 6, fill: "#d33" }, svg);
      }
      svg.addEventListener("mousemove", function (ev) {
        var r = svg.getBoundingClientRect();
        var k = Math.min(steps - 1, Math.max(0, Math.floor((ev.clientX - r.left) / r.width * steps)));
        var l = Math.floor(((ev.clientY - r.top) / r.height * height - 8) / ch);
        var p = d.palette[flat[2 * k + 1]];
        var text = "warp " + w + ", step " + k + " (line " + flat[2 * k] + "): lanes " + p +
          (p.indexOf("T") >= 0 && p.indexOf("N") >= 0 ? " (divergent)" : "");
        if (l >= 0 && l < lanes) {
          var n = perLane[l];
          text += " · lane " + l + " " + STATE[p[l]] + "; over the run: active " + n.a + " of " +
            steps + " steps, branches taken " + n.T + ", not taken " + n.N;
        }
        say(text);
      });
    });
  }

  // Bank maps: d.maps holds each distinct warp access to a watched array; x is a flat
  // list of (lane, bank, word) triples. A column per bank, a box per lane, stacked by the
  // distinct words of its bank; columns serving more than one word are red.
  function banks(box, d) {
    d.maps.forEach(function (m) {
      var words = [], lanesOf = [], b, i;
      for (b = 0; b < d.banks; b++) {
        words.push([]);
        lanesOf.push([]);
      }
      for (i = 0; i < m.x.length; i += 3) {
        b = m.x[i + 1];
        if (words[b].indexOf(m.x[i + 2]) < 0) words[b].push(m.x[i + 2]);
        lanesOf[b].push(m.x[i]);
      }
      var rows = Math.max(1, Math.max.apply(null, words.map(function (w) { return w.length; })));
      var cw = 26, ch = 16, where = m.a + " line " + m.l + ", warp " + m.w + ", " + (m.s ? "store" : "load");
      var fig = figure(box, where + ": " + plural(m.f, "wavefront"));
      var svg = svgEl("svg", {
        width: d.banks * cw, height: 14 + rows * ch * 2, "font-size": 8,
        "font-family": "monospace", "class": "bank"
      });
      fig.insertBefore(svg, fig.firstChild);
      var told = [];
      for (b = 0; b < d.banks; b++) {
        var n = words[b].length;
        told.push(lanesOf[b].length ? "bank " + b + ": lanes " + lanesOf[b].join(", ") + "; " +
          plural(n, "word") + ", " + plural(Math.max(0, n - 1), "conflict") + " (" + where + ")"
          : "bank " + b + ": no lane (" + where + ")");
        var col = svgEl("rect", {
          x: b * cw, y: 12, width: cw - 1, height: rows * ch * 2,
          fill: n > 1 ? "#fbd0d0" : "#f4f4f4", stroke: "#ddd", "data-bank": b
        }, svg);
        col.addEventListener("mouseover", say.bind(null, told[b]));
        svgEl("text", { x: b * cw + 2, y: 9 }, svg).textContent = b;
      }
      var stacked = {};
      for (i = 0; i < m.x.length; i += 3) {
        var lane = m.x[i], bank = m.x[i + 1], word = m.x[i + 2];
        var row = words[bank].indexOf(word), key = bank + ":" + row;
        // Lanes on one word (a broadcast) share a row; alternate them a little.
        var y = 12 + row * ch * 2 + ((stacked[key] = (stacked[key] || 0) + 1) - 1) % 2 * ch;
        var box2 = svgEl("rect", {
          x: bank * cw + 1, y: y, width: cw - 3, height: ch - 2,
          fill: words[bank].length > 1 ? "#d33" : "#4a7fc1", "data-lane": lane
        }, svg);
        box2.addEventListener("mouseover", say.bind(null, "lane " + lane + ": word " + word + " · " + told[bank]));
        svgEl("text", { x: bank * cw + 3, y: y + 10, fill: "white", "pointer-events": "none" }, svg)
          .textContent = lane;
      }
    });
  }

  var draw = { warps: warps, banks: banks };
  var blocks = document.querySelectorAll("script[data-view]");
  for (var i = 0; i < blocks.length; i++) {
    var box = document.createElement("div");
    blocks[i].parentNode.insertBefore(box, blocks[i]);
    draw[blocks[i].getAttribute("data-view")](box, JSON.parse(blocks[i].textContent));
  }
})();
