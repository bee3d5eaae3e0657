{%- if let Some(id) = spdx -%}
/* SPDX-License-Identifier: {{ id }} */
{% endif -%}
/*
 * {{ banner }}
 */
#ifndef {{ guard }}
#define {{ guard }}
{% if linux %}
#include <linux/bits.h>
#ifndef __ASSEMBLY__
#include <linux/bitfield.h>
#include <linux/types.h>
#endif
{%- else %}
#if !defined(__ASSEMBLY__) && !defined(__ASSEMBLER__)
#include <stdint.h>
#endif
{%- endif %}
{%- for d in devices %}

/* Device {{ d.name }}: {{ d.instances_doc }} */
{%- if let Some(max) = d.max %}
#define {{ d.upper }}_INSTANCES_MAX {{ max }}
{%- endif %}
{%- for r in d.regs %}

/* {{ d.name }}.{{ r.name }}: offset {{ r.offset_hex }}, {{ r.width }}-bit, {{ r.endian }} */
#define {{ r.upper }}_OFFSET {{ r.offset_hex }}
#define {{ r.upper }}_WIDTH {{ r.width }}
{%- for f in r.fields %}
/* {{ d.name }}.{{ r.name }}.{{ f.name }}: {{ f.doc }} */
#define {{ f.upper }}_SHIFT {{ f.shift }}
#define {{ f.upper }}_WIDTH {{ f.width }}
{%- if let Some(ppc) = f.ppc %}
#define {{ f.upper }}_MASK {{ f.mask_c }}	/* {{ ppc }} */
{%- else %}
#define {{ f.upper }}_MASK {{ f.mask_c }}
{%- endif %}
{%- if linux %}
#define {{ f.upper }}_PREP(v) FIELD_PREP({{ f.upper }}_MASK, (v))
#define {{ f.upper }}_GET(r) FIELD_GET({{ f.upper }}_MASK, (r))
{%- else %}
#define {{ f.upper }}_PREP(v) (({{ cast }}(v) << {{ f.upper }}_SHIFT) & {{ f.upper }}_MASK)
#define {{ f.upper }}_GET(r) (({{ cast }}(r) & {{ f.upper }}_MASK) >> {{ f.upper }}_SHIFT)
{%- endif %}
{%- endfor %}
{%- endfor %}
{%- endfor %}

{%- for r in records %}

/* Record {{ r.name }}: {{ r.size }} bytes, 64-bit words in the ring's byte order */
#define {{ r.upper }}_SIZE {{ r.size }}
{%- for f in r.fields %}
/* {{ r.name }}.{{ f.name }}: {{ f.doc }} */
#define {{ f.upper }}_WORD {{ f.word }}
#define {{ f.upper }}_SHIFT {{ f.shift }}
#define {{ f.upper }}_WIDTH {{ f.width }}
#define {{ f.upper }}_MASK {{ f.mask_c }}
{%- if let Some(v) = f.fixed %}
#define {{ f.upper }}_VALUE {{ v }}
{%- endif %}
{%- if linux %}
#define {{ f.upper }}_PREP(v) FIELD_PREP({{ f.upper }}_MASK, (v))
#define {{ f.upper }}_GET(w) FIELD_GET({{ f.upper }}_MASK, (w))
{%- else %}
#define {{ f.upper }}_PREP(v) (({{ cast }}(v) << {{ f.upper }}_SHIFT) & {{ f.upper }}_MASK)
#define {{ f.upper }}_GET(w) (({{ cast }}(w) & {{ f.upper }}_MASK) >> {{ f.upper }}_SHIFT)
{%- endif %}
{%- endfor %}
{%- endfor %}
{%- for q in queues %}

/* Queue {{ q.name }} {{ q.doc }}. The sequences that use it take
 * `{{ q.name }}_ring` (2^log2n entries, aligned as the device needs) and
 * `{{ q.name }}_log2n`; the caller owns the queue for the call. */
#define {{ q.upper }}_ENTRY_SIZE {{ q.entry }}
{%- if let Some(b) = q.batch %}
#define {{ q.upper }}_BATCH {{ b }}
{%- endif %}
{%- endfor %}

{%- if !thresholds.is_empty() %}

/* Strategy thresholds (compiled into the sequences; regenerate with
 * `--set NAME=VALUE` or `threshold NAME = VALUE` in the spec to change). */
{%- for t in thresholds %}
/* {{ t.doc }} */
#define {{ t.name }} {{ t.value }}
{%- endfor %}
{%- endif %}

{%- if !features.is_empty() %}

/* CPU features: bits of the `features` argument of the sequences that
 * test them at run time (fixed ones with `gen --feature NAME=on|off`). */
{%- for f in features %}
/* {{ f.doc }} */
#define {{ f.upper }} (1UL << {{ f.bit }})
{%- endfor %}
{%- endif %}

{% if linux -%}
#ifndef __ASSEMBLY__
{%- else -%}
#if !defined(__ASSEMBLY__) && !defined(__ASSEMBLER__)
{%- endif %}
{%- for d in devices %}
{%- for r in d.regs %}
{%- for f in r.fields %}
static inline {{ u64 }} {{ f.lower }}_prep({{ u64 }} v)
{
	return {{ f.upper }}_PREP(v);
}
static inline {{ u64 }} {{ f.lower }}_get({{ u64 }} r)
{
	return {{ f.upper }}_GET(r);
}
{%- endfor %}
{%- endfor %}
{%- endfor %}
{%- if !linux %}

#ifdef __cplusplus
extern "C" {
#endif
{%- endif %}
{% for p in prototypes %}
/* {{ p.doc }} */
{{ p.decl }};
{%- endfor %}
{%- if !linux %}

#ifdef __cplusplus
}
#endif
{%- endif %}
#endif /* __ASSEMBLY__ */

#endif /* {{ guard }} */
