//! The table as text and as JSON.

use super::*;

impl Table {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn to_text(&self) -> String {
        let mut o = String::new();
        o.push_str(&format!(
            "MODELLED cost (ns, not measured) of `{}` in {} on {}\n{}   [{} = {}; start {:#x}; granule {}]\n",
            self.seq,
            self.spec,
            self.target,
            self.cover,
            self.size_param,
            match (self.size_base, self.size_step) {
                (0, k) => format!("request / {k}"),
                (b, 1) => format!("{:#x} + request", b.unsigned_abs()),
                (b, k) => format!("({:#x} + request) / {k}", b.unsigned_abs()),
            },
            self.start,
            human(self.granule)
        ));
        let c = &self.costs;
        o.push_str(&format!(
            "costs: invalidate {} ns/op, store {} ns, barrier {} ns, refill {} ns/granule, all {} ns/flush",
            c.invalidate, c.store, c.barrier, c.refill, c.all
        ));
        if !self.instances.is_empty() {
            let inst: Vec<String> = self
                .instances
                .iter()
                .map(|(d, n)| format!("{d} x{n}"))
                .collect();
            o.push_str(&format!("; instances {}", inst.join(", ")));
        }
        o.push_str("\n\n");
        o.push_str(&format!("{:>8} {:>9}", "size", "granules"));
        for s in &self.strategies {
            o.push_str(&format!(" {:>12}", s.name()));
        }
        for w in &self.with {
            o.push_str(&format!(" {w:>12}"));
        }
        o.push_str("  cheapest\n");
        for r in &self.rows {
            o.push_str(&format!("{:>8} {:>9}", human(r.size), r.granules));
            for s in &self.strategies {
                let cell = match (r.cost.get(s).copied().flatten(), s) {
                    (Some(v), Strategy::Auto) => format!(
                        "{v}{}",
                        match r.auto {
                            Some(Strategy::All) => "a",
                            Some(_) => "e",
                            None => "",
                        }
                    ),
                    (Some(v), _) => v.to_string(),
                    (None, _) => "-".into(),
                };
                o.push_str(&format!(" {cell:>12}"));
            }
            for w in &self.with {
                o.push_str(&format!(" {:>12}", r.with[w]));
            }
            o.push_str(&format!("  {}\n", r.cheapest.name()));
        }
        if self.strategies.contains(&Strategy::Auto) {
            o.push_str("(auto: e = runs the exact loop, a = flushes all)\n");
        }
        o.push_str("\ncrossovers (bisection on the model):\n");
        if self.crossovers.is_empty() {
            o.push_str("  none in this range\n");
        }
        for x in &self.crossovers {
            let (f, t) = (x.from.name(), x.to.name());
            o.push_str(&format!(
                "  {f} -> {t}: {f} cheapest up to {} ({} granules; {f} {} ns, {t} {} ns{}), {t} from {} ({f} {} ns, {t} {} ns)\n",
                human(x.last),
                x.last_granules,
                x.at_last[0],
                x.at_last[1],
                if x.at_last[0] == x.at_last[1] {
                    ": a tie goes to the first, as `auto` does"
                } else {
                    ""
                },
                human(x.first),
                x.at_first[0],
                x.at_first[1]
            ));
        }
        match &self.threshold {
            Some(t) => {
                o.push_str(&format!(
                    "threshold: {} = {} granules ({}), {}",
                    t.name,
                    t.value,
                    human(t.bytes),
                    t.source
                ));
                if let (Some(p), Some(a)) = (t.per_op, t.all) {
                    o.push_str(&format!(": floor({a} ns all / {p} ns per op)"));
                }
                o.push('\n');
            }
            None => o.push_str("threshold: none (the cover is not `auto`, or states no costs)\n"),
        }
        for n in &self.notes {
            o.push_str(&format!("note: {n}\n"));
        }
        o
    }
}
