"""The report's stylesheet: screen layout, collapsible capped tables, and a print sheet for the one-page summary."""
from __future__ import annotations

__all__ = ["REPORT_CSS", "PRINT_RESIZE_JS"]

REPORT_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#1f2933;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #d9e2ec;padding-bottom:.3rem}
.meta{color:#52606d}.note{color:#52606d;font-size:.9rem}
table.tbl{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
table.tbl th,table.tbl td{border:1px solid #d9e2ec;padding:.25rem .5rem;text-align:left}
table.tbl th{background:#f0f4f8}pre{background:#f5f7fa;padding:.8rem;overflow:auto;font-size:.8rem}
.status-failed{color:#b42318;font-weight:600}.status-done{color:#1e7b34;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
details{margin:.4rem 0}details>summary{cursor:pointer;font-weight:600;padding:.2rem 0}
#executive-summary{border:1px solid #d9e2ec;border-radius:6px;padding:.6rem 1.2rem 1rem}
#executive-summary h2{margin-top:.8rem}
ul.findings li{margin:.25rem 0}
.finding-alert{color:#b42318}.finding-warning{color:#9a5b00}
.verdict{font-size:1.05rem;padding:.5rem .8rem;border-left:4px solid #52606d;background:#f5f7fa}
.verdict-block{border-left-color:#b42318}.verdict-pass{border-left-color:#1e7b34}
.key-figures{display:grid;grid-template-columns:1fr;gap:.3rem}
.key-figures h3{font-size:.95rem;margin:.3rem 0}
.print-only{display:none}
@page{size:A4 portrait;margin:10mm}
@media print{
  body{margin:0;max-width:none;padding:0;font-size:9.5pt}
  .meta{font-size:8pt;margin:.15rem 0}.verdict{font-size:10pt;padding:.3rem .6rem;margin:.3rem 0}
  ul.findings{margin:.2rem 0}ul.findings li{margin:.1rem 0}
  .detail,.screen-only{display:none !important}
  .print-only{display:block}
  #executive-summary{border:0;padding:0;break-inside:avoid}
  h1{font-size:14pt;margin:0}h2{font-size:11pt;margin:.4rem 0 .2rem}.key-figures h3{font-size:9pt;margin:0}
  .key-figures{gap:2mm}
}
"""

#: Before printing: the summary's figures get print heights and every figure is re-laid out at the
#: printed width (plotly only follows window resizes); after printing the screen heights come back.
PRINT_RESIZE_JS = """<script>
(function(){
  function each(f){document.querySelectorAll('.js-plotly-plot').forEach(function(d){if(window.Plotly){f(d);}});}
  window.addEventListener('beforeprint',function(){each(function(d){
    var key=d.closest('.key');
    if(key){var h=170;d.dataset.screenHeight=d.layout.height;
      d.parentElement.style.height=d.style.height=h+'px';Plotly.relayout(d,{height:h});}
    else{Plotly.Plots.resize(d);}
  });});
  window.addEventListener('afterprint',function(){each(function(d){
    if(d.dataset.screenHeight){var h=+d.dataset.screenHeight;d.parentElement.style.height=d.style.height=h+'px';
      Plotly.relayout(d,{height:h});
      delete d.dataset.screenHeight;}
    else{Plotly.Plots.resize(d);}
  });});
})();
</script>"""
