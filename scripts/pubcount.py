"""Count public items of our crates and those named by no other crate (one-off, approximate).
A public item: a line `pub fn|struct|enum|trait|const|static|type|mod NAME` (not pub(crate)) in
crates/<c>/src. Used elsewhere: NAME appears as a word in another crate's src/tests/benches, or
in the crate's own tests/ or benches/ (integration tests are users outside the crate)."""
import os,re,sys,collections
root=sys.argv[1]
crates=[c for c in sorted(os.listdir(root+'/crates')) if os.path.isdir(f'{root}/crates/{c}/src')]
texts=collections.defaultdict(str)   # crate -> text of its src
outer=collections.defaultdict(str)   # crate -> text of its tests+benches
for c in crates:
    for sub in ['src','tests','benches','examples']:
        for d,_,fs in os.walk(f'{root}/crates/{c}/{sub}'):
            for f in fs:
                if f.endswith('.rs'):
                    t=open(os.path.join(d,f),errors='replace').read()
                    if sub=='src': texts[c]+=t
                    else: outer[c]+=t
item=re.compile(r'^\s*pub\s+(?:async\s+|const\s+(?=fn)|unsafe\s+)*(fn|struct|enum|trait|const|static|type|mod)\s+([A-Za-z_]\w*)',re.M)
tot=unused=0
per={}
words={c:set(re.findall(r'\w+',texts[c]+outer[c])) for c in crates}
for c in crates:
    names=[m.group(2) for m in item.finditer(texts[c])]
    others=set()
    for o in crates:
        if o!=c: others|=set(re.findall(r'\w+',texts[o]))
    others|=set(re.findall(r'\w+',outer[c]))
    u=[n for n in names if n not in others]
    per[c]=(len(names),len(u))
    tot+=len(names); unused+=len(u)
for c,(n,u) in per.items(): print(f'{c:14} {n:5} public, {u:4} named by no other crate')
print(f'total {tot} public items, {unused} named by no other crate')
