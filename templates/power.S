{%- if let Some(id) = v.spdx -%}
/* SPDX-License-Identifier: {{ id }} */
{% endif -%}
/* {{ v.banner }} */
{%- if v.linux %}
#include <asm/ppc_asm.h>
{%- for i in v.includes %}
#include <{{ i }}>
{%- endfor %}

/*
 * _GLOBAL() gives the ELFv2 entry point or the ELFv1 function descriptor
 * (and .name code symbol), whichever ABI the kernel is built for; the
{%- if v.arch == Some("e6500") %}
 * Book III-E instructions need e6500, so the level is set for this file only.
{%- else %}
 * radix tlbie form needs POWER9, so the level is raised for this file only.
{%- endif %}
 */
	.machine push
	.machine {{ v.arch.unwrap_or("power9") }}
{%- else %}
	.machine {{ v.arch.unwrap_or("power9") }}
{%- if elfv2 %}
	.abiversion 2
{%- endif %}
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
{{- f.body }}
{%- if v.linux %}
	.size DOTSYM({{ f.symbol }}),.-DOTSYM({{ f.symbol }})
{%- else if elfv2 %}
	.size {{ f.symbol }},.-{{ f.symbol }}
{%- else %}
	.size {{ f.symbol }},.-.{{ f.symbol }}
{%- endif %}
{%- endfor %}
{%- if v.linux %}
	.machine pop
{%- else %}
	.section .note.GNU-stack,"",@progbits
{%- endif %}
