# Reads a RAGuard export the way the release's loaders do: list columns parsed with
# ast.literal_eval, documents joined to claims on `Claim ID`. Prints facts as JSON.
# Used by crates/label/tests/it/export.rs and crates/cli/tests/it/demo.rs.
import ast, json, sys
import pandas as pd
d = sys.argv[1]
claims = pd.read_csv(f"{d}/claims.csv")
docs = pd.read_csv(f"{d}/documents.csv", keep_default_na=False)
for col in ["Document IDs", "Document Labels"]:
    claims[col] = claims[col].apply(ast.literal_eval)
merged = docs.merge(claims, on="Claim ID", how="left", validate="many_to_one")
ok = True
for _, c in claims.iterrows():
    ids = c["Document IDs"]
    mine = docs[docs["Claim ID"] == c["Claim ID"]]
    ok &= list(mine["Document ID"]) == ids
    ok &= list(mine["Document Label"]) == c["Document Labels"]
    ok &= ids == list(range(ids[0], ids[0] + len(ids))) if ids else True
print(json.dumps({
    "claims": len(claims), "documents": len(docs), "merged": len(merged),
    "columns_claims": list(claims.columns), "columns_documents": list(docs.columns),
    "labels": merged["Document Label"].value_counts().sort_index().to_dict(),
    "verdicts": merged["Verdict"].value_counts().sort_index().to_dict(),
    "first_claim": claims["Claim"][0], "first_text": docs["Full Text"][0],
    "consistent": bool(ok),
}))
