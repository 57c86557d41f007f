"""The frame every HTML report shares: inline styles, the search bar and the small script.

The page scrolls inside one ``<main>`` element rather than the document: a deep link
(``report.html#a-12``) then shows its target in every browser and in headless screenshots,
which capture a scrolled document as a blank image.

The script (no library, no network) does four things, each also usable by a headless browser:

- search: the box matches every attempt's ``data-q`` text (``task:``, ``tool:``, ``id:``,
  ``state:`` narrow a term to one field; a bare term matches anywhere), the state menu its
  state; heatmap rows and task sections follow their attempts;
- lazy sections: a task's attempts embedded as zlib + base64 (``data-z`` names its
  ``<script type="application/x-hw-deflate">``) are inflated with the browser's
  ``DecompressionStream`` and inserted when their section is opened, linked to or searched
  (``script.where`` maps each attempt to its section, ``script.index`` holds the search text
  of the attempts not yet in the page);
- deep links: on load and on every change of the fragment, the element named is rendered
  if needed, every ``<details>`` around it opened, marked ``.hit`` and scrolled to (only the
  latest jump scrolls: an earlier one still inflating its transcript gives way);
- keys: ``j`` and ``k`` go to the next and the previous failed attempt shown.
"""

from __future__ import annotations

import base64
import zlib
from html import escape

from harness_world.analysis.plots import COLORS

__all__ = ["DEFLATE_TYPE", "embedded", "page"]

DEFLATE_TYPE = "application/x-hw-deflate"
"""The ``type`` of a ``<script>`` holding a zlib-compressed, base64-encoded HTML fragment."""

_CSS = """
html,body{margin:0;padding:0}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
color:#212121}#view{height:100vh;overflow:auto;outline:none}
#view>.wrap{max-width:1100px;margin:0 auto;padding:0 1.5em 1em}
@media print{#view{height:auto;overflow:visible}}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:left;
vertical-align:top}table.num td,table.num th{border-bottom:1px solid #eee}
.plot{max-width:100%;height:auto;display:block;margin:.5em 0}
.heat td{padding:1px}.heat th{font-weight:normal;font-size:12px;white-space:nowrap}
.heat tr.fam th{font-weight:bold;padding-top:.6em}
a.c{display:block;width:1.6em;line-height:1.6em;text-align:center;color:#fff;
text-decoration:none;font-size:12px;border-radius:2px}a.c:focus{outline:2px solid #000}
.k{font-size:11px;padding:0 4px;border-radius:2px}.k.solid{background:#c8e6c9}
.k.flaky{background:#fff3c4}.k.broken{background:#ffcdd2}
article.trace{border:1px solid #ddd;border-left-width:6px;margin:.6em 0;padding:.2em .8em;
scroll-margin-top:3.5em}article.trace:target,.hit{box-shadow:0 0 0 3px #1565c0}
pre,code{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;
word-break:break-all}pre{background:#f6f6f6;padding:4px;margin:2px 0}
ol.calls>li{margin:2px 0}ol.calls li.bad{background:#fff5f5}ol.calls li.named{
border-left:3px solid #1565c0;padding-left:4px}ol.calls details{scroll-margin-top:3.5em}
.error,.no{color:#b71c1c}.ok{color:#2e7d32}.clock,.seq{color:#666;font-size:12px}
li.turn{background:#f3f6fb;padding:2px 6px;list-style:none;margin-left:-1.2em}
li.msg.system,li.msg.tool{background:#f7f7f7}li.msg.assistant{background:#eef6ee}
span.hl{background:#fff59d;display:inline-block;min-width:100%}.cut{color:#666}
.gist{color:#37474f}table.diff{font-size:12px;border:1px solid #ddd}
table.diff caption{text-align:left;font-weight:bold}td.old{background:#ffebee}
td.new{background:#e8f5e9}ul.criteria li.failed{color:#b71c1c}
ul.criteria li.failed b{font-weight:bold}ul.criteria li.passed{color:#2e7d32}
ul.criteria li.advisory{color:#8d4e00}ul.criteria li.not_reviewed{color:#8d6e00}
.meta{color:#555;font-size:12px}.refs a{margin-right:.3em}
.instr{background:#f3f6fb;padding:.4em .8em;border-radius:4px}
#filters{position:sticky;top:0;z-index:2;background:#fff;padding:.4em 0;
border-bottom:1px solid #ddd}#filters input{width:22em}
.hidden{display:none}.verdict{font-size:1.2em;font-weight:bold}.headline{font-size:1.15em}
table.sbs{font-size:12px;width:100%}table.sbs td{width:50%;border-bottom:1px solid #eee}
table.sbs tr.differs td{background:#fff8e1}details>summary{cursor:pointer}
details.expected{scroll-margin-top:3.5em}table.expect{font-size:12px;width:100%}
table.expect td{border:1px solid #eee}
table.expect ul{margin:0 0 .3em;padding-left:1.2em}.effect.unauthorized,.missing{color:#b71c1c}
.effect.required{color:#2e7d32}.effect.allowed{color:#37474f}
li.planted{border-left:3px solid #6a1b9a;padding-left:4px}.planted-mark{background:#f3e5f5;
color:#6a1b9a;font-size:12px;padding:0 4px;border-radius:2px}.planted-note{color:#6a1b9a}
table.attempts{font-size:12px}table.attempts button.sort{font:inherit;font-weight:bold;
border:0;background:none;padding:0;cursor:pointer}
th[aria-sort=ascending] button.sort::after{content:" ▲"}
th[aria-sort=descending] button.sort::after{content:" ▼"}
"""
_CSS += "".join(
    f"article.trace.{s}{{border-left-color:{c}}}"
    f"a.c.{s},.st.{s}{{background:{c};color:#fff;padding:0 3px}}"
    for s, c in COLORS.items()
)

_SCRIPT = """
(function(){'use strict';
var q=document.getElementById('q'),s=document.getElementById('s'),n=document.getElementById('n');
function bytes(t){var b=atob(t.trim()),u=new Uint8Array(b.length);
for(var i=0;i<b.length;i++){u[i]=b.charCodeAt(i);}return u;}
function inflate(id){var t=document.getElementById(id).textContent;
var st=new Blob([bytes(t)]).stream().pipeThrough(new DecompressionStream('deflate'));
return new Response(st).text();}
var where={},keep=null,index=null,pending={},latest=0;
document.querySelectorAll('script.where').forEach(function(e){
Object.assign(where,JSON.parse(e.textContent));});
function mark(root){root.querySelectorAll('article.trace').forEach(function(a){
a.classList.toggle('hidden',!!keep&&!keep[a.id]);});}
function section(id){var sec=document.getElementById(id),
d=sec&&sec.querySelector('details.attempts[data-z]');if(!d){return Promise.resolve();}
if(!pending[id]){pending[id]=inflate(d.getAttribute('data-z')).then(function(h){
d.removeAttribute('data-z');d.insertAdjacentHTML('beforeend',h);d.open=true;mark(d);});}
return pending[id];}
function base(id){var m=/^(.*?-\\d+)(?:-[cum]\\d+)?$/.exec(id);return m?m[1]:id;}
function go(id){if(!id){return Promise.resolve();}var mine=++latest,b=base(id);
var wait=!document.getElementById(b)&&where[b]?section(where[b]):Promise.resolve();
return wait.then(function(){var el=document.getElementById(id);if(!el||mine!==latest){return;}
for(var d=el;d;d=d.parentElement){if(d.tagName==='DETAILS'){d.open=true;}}
var t=el.tagName==='ARTICLE'&&el.querySelector('details.transcript');if(t){t.open=true;}
document.querySelectorAll('.hit').forEach(function(x){x.classList.remove('hit');});
el.classList.add('hit');el.scrollIntoView({block:'start'});});}
function hash(){return decodeURIComponent(location.hash.slice(1));}
window.addEventListener('hashchange',function(){go(hash());});
document.addEventListener('click',function(e){
var a=e.target.closest&&e.target.closest('a[href^="#"]');
if(a&&a.getAttribute('href')===location.hash){go(hash());}});
document.addEventListener('toggle',function(e){var d=e.target;
if(d.classList&&d.classList.contains('attempts')&&d.open){section(d.closest('section').id);}},
true);
function entries(){if(index){return Promise.resolve(index);}
var shown=[].filter.call(document.querySelectorAll('article.trace'),function(a){
return !a.closest('section[data-lazy]');}).map(function(a){return [a.id,
a.getAttribute('data-state'),a.getAttribute('data-task'),a.getAttribute('data-q')||''];});
var blobs=[].slice.call(document.querySelectorAll('script.index'));
return Promise.all(blobs.map(function(b){return inflate(b.id).then(JSON.parse);})).then(
function(lists){index=shown.concat.apply(shown,lists);return index;});}
function field(d,t){var k=t.indexOf(':');if(k<1){return d.indexOf(t)>=0;}
var f=t.slice(0,k+1),v=t.slice(k+1);return d.split(' ').some(function(w){
return w.indexOf(f)===0&&w.indexOf(v,f.length)>=0;});}
function apply(){var terms=q.value.toLowerCase().split(/\\s+/).filter(Boolean),st=s.value;
if(!terms.length&&!st){keep=null;n.textContent='';mark(document);
document.querySelectorAll('tr[data-task],section[data-task]').forEach(function(x){
x.classList.remove('hidden');});return Promise.resolve();}
return entries().then(function(all){var k={},tasks={},secs={},shown=0;all.forEach(function(e){
if(terms.every(function(t){return field(e[3],t);})&&(!st||e[1]===st)){k[e[0]]=1;
tasks[e[2]]=1;shown++;if(where[e[0]]){secs[where[e[0]]]=1;}}});keep=k;
document.querySelectorAll('tr[data-task],section[data-task]').forEach(function(x){
x.classList.toggle('hidden',!tasks[x.getAttribute('data-task')]);});mark(document);
n.textContent=shown+' of '+all.length+' attempts';
return shown<=1000?Promise.all(Object.keys(secs).map(section)):null;});}
q.addEventListener('input',apply);s.addEventListener('change',apply);
function failed(){return [].map.call(document.querySelectorAll('a.c.failed'),function(a){
return a.getAttribute('href').slice(1);}).filter(function(id){return !keep||keep[id];});}
document.addEventListener('keydown',function(e){if(e.key!=='j'&&e.key!=='k'){return;}
if(e.target.closest&&e.target.closest('input,select,textarea')){return;}
var ids=failed();if(!ids.length){return;}var i=ids.indexOf(base(hash()));
var next=e.key==='j'?(i<0?0:Math.min(i+1,ids.length-1)):(i<0?ids.length-1:Math.max(i-1,0));
location.hash='#'+ids[next];});
function rows(t){return [].slice.call(t.tBodies[0].rows);}
function sortBy(t,th){var i=[].indexOf.call(th.parentNode.cells,th),
up=th.getAttribute('aria-sort')!=='ascending';[].forEach.call(th.parentNode.cells,
function(h){h.removeAttribute('aria-sort');});th.setAttribute('aria-sort',
up?'ascending':'descending');var r=rows(t).map(function(x,k){return [x.cells[i].textContent,k,x];});
r.sort(function(a,b){var p=Number(a[0]),q=Number(b[0]),c=a[0]!==''&&b[0]!==''&&!isNaN(p)&&
!isNaN(q)?p-q:a[0].localeCompare(b[0]);return (up?c:-c)||a[1]-b[1];});
var body=t.tBodies[0];r.forEach(function(x){body.appendChild(x[2]);});}
function filt(t,v){var terms=v.toLowerCase().split(/\\s+/).filter(Boolean),r=rows(t),shown=0;
r.forEach(function(x){var s=x.textContent.toLowerCase(),k=terms.every(function(w){
return s.indexOf(w)>=0;});x.classList.toggle('hidden',!k);if(k){shown++;}});
var c=document.getElementById(t.id+'-n');if(c){c.textContent=terms.length?shown+' of '+
r.length+' attempts':'';}}
function table(t){var d=t.closest('details'),box=document.getElementById(t.id+'-q'),p=null;
function ready(){if(!p){p=t.hasAttribute('data-z')?inflate(t.getAttribute('data-z')).then(
function(h){t.removeAttribute('data-z');t.tBodies[0].insertAdjacentHTML('beforeend',h);}):
Promise.resolve();}return p;}
t.tHead.addEventListener('click',function(e){var th=e.target.closest('th');
if(th){return ready().then(function(){sortBy(t,th);});}});
if(box){box.addEventListener('input',function(){if(d){d.open=true;}
ready().then(function(){filt(t,box.value);});});}
if(d){d.addEventListener('toggle',function(){if(d.open){ready();}});}}
document.querySelectorAll('table.attempts').forEach(table);
document.getElementById('view').focus({preventScroll:true});
if(location.hash){go(hash());}})();
"""


def embedded(ident: str, text: str, css: str = "") -> str:
    """A ``<script>`` element holding ``text`` compressed (zlib, then base64)."""
    data = base64.b64encode(zlib.compress(text.encode(), 6)).decode()
    kind = f' class="{css}"' if css else ""
    return f'<script type="{DEFLATE_TYPE}" id="{ident}"{kind}>{data}</script>'


def page(title: str, body: str) -> str:
    """A whole page: the sticky search bar, ``body``, then the script."""
    states = "".join(f'<option value="{s}">{s}</option>' for s in COLORS)
    filters = (
        '<div id="filters"><label>search <input id="q" type="search" placeholder="text, '
        'task:…, tool:…, id:…, state:…"></label> <label>state <select id="s"><option '
        f'value="">any</option>{states}</select></label> <span id="n" class="meta"></span> '
        '<span class="meta">j / k: next / previous failed attempt</span><noscript> (search, '
        "keys and compressed transcripts need JavaScript)</noscript></div>"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<main id="view" tabindex="-1"><div class="wrap">{filters}{body}</div></main>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
