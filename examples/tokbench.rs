use _core::tokenize::Options;
use _core::bag::Bag;
use _core::vocab::Vocabulary;
fn main() {
    let which: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let data = std::fs::read_to_string("/tmp/corpus500.txt").unwrap();
    let texts: Vec<&str> = data.split('\0').collect();
    let opts = Options { lowercase: true, ngram_range: Some((1,1)), ..Default::default() };
    let mut scratch = Vec::new();
    let v = Vocabulary::new();
    let mut n = 0usize;
    for x in &texts {
        match which {
            0 => {}
            1 => opts.scan(x, true, None, &mut scratch, |w| n += w.len()),
            2 => opts.scan(x, true, None, &mut scratch, |w| n = n.wrapping_add(v.hash(w) as usize)),
            _ => { let mut bag = Bag::with_capacity(x.len() / 16, x.len() / 4); opts.scan(x, true, None, &mut scratch, |w| bag.add(w, v.hash(w), 1.0)); n += bag.len(); }
        }
    }
    println!("{n}");
}
