//! A plugin whose resource is outside its schemes: it builds, but its
//! describe fails, so it does not load.

use corral::{Plugin, ReadResult, Resource};

fn build() -> Plugin {
    let mut p = Plugin::new("misdeclared", "1.0.0");
    p.scheme("notes");
    p.resource(Resource::new("docs://index", "index"), |req| Ok(ReadResult::text(&req.uri, "text/plain", "index")));
    p
}

corral::plugin!(build);
