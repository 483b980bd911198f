"""The stylesheet and the script inlined into every HTML page (no network, no framework)."""

CSS = """
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d1d1f;background:#fff}
header{padding:8px 14px;background:#f3f4f6;border-bottom:1px solid #d0d4da}
header h1{font-size:17px;margin:0 0 2px}
header .meta{color:#555;font-size:12px}
header nav{float:right;font-size:12px}
a{color:#0b5cad}
.tabs{margin-top:6px}
.tabs button{font:12px ui-monospace,Menlo,Consolas,monospace;border:1px solid #aab;background:#fff;padding:3px 9px;
  border-radius:4px 4px 0 0;cursor:pointer;margin-right:3px}
.tabs button.active{background:#1d4f91;color:#fff;border-color:#1d4f91}
details.summary{padding:4px 14px;border-bottom:1px solid #d0d4da}
details.summary>summary{cursor:pointer;color:#444;font-weight:600}
.kinfo{display:none;gap:22px;flex-wrap:wrap;align-items:flex-start;padding:4px 0}
.kinfo.active{display:flex}
.kinfo h3{font-size:12px;margin:4px 0;color:#444;text-transform:uppercase;letter-spacing:.04em}
table.grid{border-collapse:collapse;font:12px ui-monospace,Menlo,Consolas,monospace}
table.grid th,table.grid td{border:1px solid #d5d9df;padding:1px 6px;text-align:right}
table.grid th{background:#f3f4f6;font-weight:600}
table.grid td:first-child,table.grid th:first-child{text-align:left}
td.up{color:#a40000} td.down{color:#006b1b}
.badges{max-width:720px}
.badge{display:inline-block;margin:1px 2px;padding:0 6px;border-radius:9px;font:11px ui-monospace,Menlo,monospace;
  border:1px solid}
.badge.pass{background:#e3f6e6;color:#0c5a1c;border-color:#9fd3a9}
.badge.fail{background:#fde4e4;color:#8c0000;border-color:#e8a0a0}
.panes{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:0}
.pane{overflow:auto;height:calc(100vh - 120px);min-height:420px;border-right:1px solid #d0d4da;position:relative}
.pane h2{font-size:13px;margin:0;padding:4px 8px;background:#fafafa;border-bottom:1px solid #e3e3e3;position:sticky;
  top:0;z-index:2}
table.code{border-collapse:collapse;width:100%;font:12px/1.35 ui-monospace,'SF Mono',Menlo,Consolas,monospace}
table.code td{padding:0 6px;white-space:pre;vertical-align:top}
table.code td.n,table.code td.a{color:#8a8f98;text-align:right;user-select:none;width:1%}
table.code td.k{color:#8a8f98;text-align:right;width:1%;font-size:11px}
table.code td.o{color:#8a8f98;font-size:11px;width:1%}
table.code td.g{color:#b0b4ba;width:1%;padding:0 2px}
table.code td.g b{color:#d12c2c}
.cm{color:#6a737d;font-style:italic}
tr[data-line]{cursor:pointer}
#src tr.on{background:hsl(var(--h),75%,95%)}
#src tr.on td.n{box-shadow:inset 5px 0 hsl(var(--h),60%,55%)}
table.sass tr[data-line]{background:hsl(var(--h),75%,96%)}
table.sass tr[data-line] td.a{box-shadow:inset 5px 0 hsl(var(--h),60%,55%)}
table.sass{display:none}
table.sass.active{display:table}
tr.lbl td{color:#6b7280;font-style:italic}
tr.hot td.t{font-weight:600}
tr.hothead td{background:#fff1f0;color:#a40000;font:600 11px system-ui,sans-serif;white-space:normal;
  border-top:2px solid #d12c2c}
tr.hl,tr.hl td{background:#ffe680 !important}
tr.pin,tr.pin td{background:#ffcf3d !important}
tr.q td.t{text-decoration:underline dotted #2f6fc0;text-underline-offset:3px}
tr.note td{white-space:normal;font:12.5px/1.45 system-ui,sans-serif;background:#eef4ff;border:1px solid #9db8e0;
  padding:4px 10px;cursor:pointer}
tr.note h3,tr.note h4,tr.note h5{margin:4px 0;font-size:13px}
tr.note p{margin:4px 0}
tr.note pre,.walk pre{background:#fff;border:1px solid #cdd;padding:4px 6px;overflow:auto;font-size:11.5px}
tr.note table.md,.walk table.md{border-collapse:collapse;font-size:11.5px}
table.md td,table.md th{border:1px solid #ccd;padding:1px 5px}
code{font:11.5px ui-monospace,Menlo,Consolas,monospace;background:#f1f3f5;padding:0 3px;border-radius:3px}
.walk{padding:6px 14px;border-top:1px solid #d0d4da;max-width:1100px}
.walk>summary{cursor:pointer;font-weight:600}
tr.add td{background:#e6ffed} tr.del td{background:#ffeef0} tr.hunk td{background:#f1f8ff;color:#555}
.pair{margin:0 0 14px}
.pair h3{font-size:13px;margin:8px 8px 4px}
.pair .grid{margin:0 8px 6px}
table.index td,table.index th{text-align:left}
main.index{padding:10px 16px}
"""

JS = r"""
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    document.documentElement.setAttribute('data-errors', errors.join(' | '));
  });
  var src = document.getElementById('src'), sass = document.getElementById('sass');
  if (!src || !sass) return;
  var active = '0';
  function table() { return sass.querySelector('table.sass[data-kernel="' + active + '"]'); }
  function sassRows(line) {
    var t = table();
    return t ? t.querySelectorAll('tr[data-line="' + line + '"]') : [];
  }
  function srcRow(line) { return src.querySelector('tr[data-line="' + line + '"]'); }
  function clear(cls) {
    document.querySelectorAll('tr.' + cls).forEach(function (e) { e.classList.remove(cls); });
  }
  function mark(line, cls) {
    clear(cls);
    if (line === null) return 0;
    var r = srcRow(line);
    if (r) r.classList.add(cls);
    var rows = sassRows(line);
    rows.forEach(function (e) { e.classList.add(cls); });
    return rows.length;
  }
  function reveal(pane, row) {
    if (!row) return;
    var d = row.getBoundingClientRect().top - pane.getBoundingClientRect().top;
    pane.scrollTop += d - pane.clientHeight / 3;
  }
  function lineOf(ev) {
    var tr = ev.target.closest ? ev.target.closest('tr[data-line]') : null;
    return tr ? tr.getAttribute('data-line') : null;
  }
  [src, sass].forEach(function (pane) {
    pane.addEventListener('mouseover', function (ev) { var l = lineOf(ev); if (l !== null) mark(l, 'hl'); });
    pane.addEventListener('mouseleave', function () { clear('hl'); });
  });
  src.addEventListener('click', function (ev) {
    var l = lineOf(ev);
    if (l === null) return;
    mark(l, 'pin');
    reveal(sass, sassRows(l)[0]);
  });
  sass.addEventListener('click', function (ev) {
    var note = ev.target.closest ? ev.target.closest('tr.note') : null;
    if (note) {
      clear('pin');
      var id = note.getAttribute('data-note');
      table().querySelectorAll('tr.q').forEach(function (r) {
        if ((' ' + r.getAttribute('data-notes') + ' ').indexOf(' ' + id + ' ') >= 0) r.classList.add('pin');
      });
      return;
    }
    var l = lineOf(ev);
    if (l === null) return;
    mark(l, 'pin');
    reveal(src, srcRow(l));
  });
  function select(k) {
    active = String(k);
    document.querySelectorAll('[data-kernel]').forEach(function (e) {
      e.classList.toggle('active', e.getAttribute('data-kernel') === active);
    });
    document.querySelectorAll('.tabs button').forEach(function (b) {
      b.classList.toggle('active', b.getAttribute('data-k') === active);
    });
    src.querySelectorAll('tr[data-line]').forEach(function (r) {
      var ks = ' ' + (r.getAttribute('data-kernels') || '') + ' ';
      r.classList.toggle('on', ks.indexOf(' ' + active + ' ') >= 0);
      var n = r.querySelector('td.k');
      if (n) {
        var m = (' ' + (r.getAttribute('data-counts') || '') + ' ').match(new RegExp(' ' + active + ':(\\d+) '));
        n.textContent = m ? m[1] : '';
      }
    });
    clear('hl'); clear('pin');
  }
  document.querySelectorAll('.tabs button').forEach(function (b) {
    b.addEventListener('click', function () { select(b.getAttribute('data-k')); });
  });
  select(0);
  var hash = location.hash.replace(/^#/, '');
  var km = hash.match(/(?:^|&)k(\d+)/), lm = hash.match(/(?:^|&)L(\d+)/);
  if (km) select(km[1]);
  if (lm) { mark(lm[1], 'pin'); reveal(src, srcRow(lm[1])); reveal(sass, sassRows(lm[1])[0]); }
  if (/(?:^|&)selftest/.test(hash)) {
    // A scripted hover for the headless-browser test, in every kernel (its tab clicked first): the
    // source line with the most instructions in that kernel must highlight exactly those, and the
    // verdict is left in the DOM.
    var hover = function () {
      var row = null, most = 0;
      src.querySelectorAll('tr.on[data-line]').forEach(function (r) {
        var n = sassRows(r.getAttribute('data-line')).length;
        if (n > most) { most = n; row = r; }
      });
      if (!row) return 'fail: kernel ' + active + ' has no source line with SASS';
      var line = row.getAttribute('data-line'), want = sassRows(line).length;
      row.querySelector('td').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
      var got = table().querySelectorAll('tr.hl[data-line="' + line + '"]').length;
      var stray = sass.querySelectorAll('tr.hl:not([data-line="' + line + '"])').length;
      return (want > 0 && got === want && stray === 0 && row.classList.contains('hl'))
        ? 'ok: kernel ' + active + ', source line ' + line + ' highlighted its ' + got + ' SASS instruction(s)'
        : 'fail: kernel ' + active + ', line ' + line + ' wants ' + want + ', highlighted ' + got + ', stray ' + stray;
    };
    var verdicts = [];
    var tabs = document.querySelectorAll('.tabs button');
    if (!tabs.length) verdicts.push('ok: no kernel functions on this page, nothing to hover');
    tabs.forEach(function (b) {
      b.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var shown = sass.querySelectorAll('table.sass.active');
      verdicts.push(shown.length === 1 && shown[0].getAttribute('data-kernel') === b.getAttribute('data-k')
                    ? hover() : 'fail: tab ' + b.getAttribute('data-k') + ' does not show its kernel alone');
    });
    var failed = verdicts.filter(function (v) { return v.indexOf('ok') !== 0; });
    document.documentElement.setAttribute('data-selftest', failed.length ? failed.join('; ') : verdicts.join('; '));
  }
})();
"""
