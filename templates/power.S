{%- if let Some(id) = v.spdx -%}
/* SPDX-License-Identifier: {{ id }} */
{% endif -%}
/* {{ v.banner }} */
{%- if v.linux %}
#include <asm/ppc_asm.h>
{%- endif %}
{%- if !v.linux %}
	.machine power9
{%- endif %}
{%- if elfv2 %}
	.abiversion 2
{%- endif %}
	.text
{%- for f in v.funcs %}

{%- if v.linux %}
_GLOBAL({{ f.symbol }})
{%- else if elfv2 %}
	.p2align 4
	.globl {{ f.symbol }}
	.type {{ f.symbol }},@function
{{ f.symbol }}:
{%- else %}
	.globl {{ f.symbol }}
	.section ".opd","aw"
	.p2align 3
{{ f.symbol }}:
	.quad .{{ f.symbol }},.TOC.@tocbase,0
	.previous
	.type {{ f.symbol }},@function
	.p2align 4
.{{ f.symbol }}:
{%- endif %}
{%- for l in f.body %}
{{ l }}
{%- endfor %}
{%- if !v.linux %}
{%- if elfv2 %}
	.size {{ f.symbol }},.-{{ f.symbol }}
{%- else %}
	.size {{ f.symbol }},.-.{{ f.symbol }}
{%- endif %}
{%- endif %}
{%- endfor %}
{%- if !v.linux %}
	.section .note.GNU-stack,"",@progbits
{%- endif %}
