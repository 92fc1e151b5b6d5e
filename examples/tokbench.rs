use _core::tokenize::Options;
use _core::bag::Bag;
use _core::vocab::Vocabulary;
fn main() {
    let which: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let data = std::fs::read_to_string("/tmp/corpus500.txt").unwrap();
    let texts: Vec<&str> = data.split('\0').collect();
    let opts = Options { lowercase: true, ngram_range: Some((1,1)), ..Default::default() };
    let mut scratch = Vec::new();
    let mut v = Vocabulary::new();
    if which >= 4 { for x in &texts { opts.scan(x, true, None, &mut scratch, |w| { v.find_or_add(w).unwrap(); }); } }
    let mut n = 0usize;
    for x in &texts {
        match which {
            0 => {}
            1 => opts.scan(x, true, None, &mut scratch, |w| n += w.len()),
            2 => opts.scan(x, true, None, &mut scratch, |w| n = n.wrapping_add(v.hash(w) as usize)),
            4 => { let mut c = _core::doc::IdCounts::with_capacity(x.len() / 16 + 8); let mut bag = Bag::with_capacity(16, 64);
                   opts.scan(x, true, None, &mut scratch, |w| { let h = v.hash(w); match v.find_hashed(w, h) { Some(id) => c.add(id, 1.0), None => bag.add(w, h, 1.0) } }); n += c.ids.len(); }
            5 => { for x2 in &texts[..0] { let _ = x2; } opts.scan(x, true, None, &mut scratch, |w| { let h = v.hash(w); if v.find_hashed(w, h).is_some() { n += 1 } }); }
            _ => { let mut bag = Bag::with_capacity(x.len() / 16, x.len() / 4); opts.scan(x, true, None, &mut scratch, |w| bag.add(w, v.hash(w), 1.0)); n += bag.len(); }
        }
    }
    println!("{n}");
}
