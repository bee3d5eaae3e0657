{%- if let Some(id) = v.spdx -%}
/* SPDX-License-Identifier: {{ id }} */
{% endif -%}
/* {{ v.banner }} */
{%- if v.linux %}
#include <linux/linkage.h>
{%- for i in v.includes %}
#include <{{ i }}>
{%- endfor %}
{%- endif %}
	.option push
	.option norvc
	.option norelax
{%- if let Some(arch) = v.arch %}
	.option arch, +{{ arch }}
{%- endif %}
	.text
{%- for f in v.funcs %}

{%- if v.linux %}
SYM_FUNC_START({{ f.symbol }})
{%- else %}
	.p2align 2
	.globl {{ f.symbol }}
	.type {{ f.symbol }},%function
{{ f.symbol }}:
{%- endif %}
{{- f.body }}
{%- if v.linux %}
SYM_FUNC_END({{ f.symbol }})
{%- else %}
	.size {{ f.symbol }},.-{{ f.symbol }}
{%- endif %}
{%- endfor %}
	.option pop
{%- if !v.linux %}
	.section .note.GNU-stack,"",%progbits
{%- endif %}
