"""Cloud Storage objects (DESIGN GG): upload, list with prefix,
delimiter and paging, get, alt=media, delete."""
import urllib.parse


def test_storage(gcp):
    up = "/upload/storage/v1/b/bkt/o?uploadType=media&name="
    for n in ["a/1", "a/2", "a/sub/3", "b/4", "c"]:
        st, o, _ = gcp.call("POST", up + urllib.parse.quote(n, safe=""),
                            raw=n.encode(),
                            headers={"Content-Type": "text/plain"})
        assert st == 200 and o["size"] == str(len(n))
    l = gcp.get("/storage/v1/b/bkt/o?delimiter=/")[1]
    assert l["prefixes"] == ["a/", "b/"] and [i["name"] for i in
                                                l["items"]] == ["c"]
    l = gcp.get("/storage/v1/b/bkt/o?prefix=a/&delimiter=/")[1]
    assert [i["name"] for i in l["items"]] == ["a/1", "a/2"]
    assert l["prefixes"] == ["a/sub/"]
    names, tok = [], None
    while True:
        l = gcp.get("/storage/v1/b/bkt/o?maxResults=2" + (
            "&pageToken=" + tok if tok else ""))[1]
        names += [i["name"] for i in l.get("items", [])]
        tok = l.get("nextPageToken")
        if not tok:
            break
    assert names == ["a/1", "a/2", "a/sub/3", "b/4", "c"]
    st, o, _ = gcp.get("/storage/v1/b/bkt/o/a%2Fsub%2F3")
    assert o["name"] == "a/sub/3" and o["generation"].isdigit()
    assert o["timeCreated"].endswith("Z")
    st, data, h = gcp.get("/storage/v1/b/bkt/o/a%2Fsub%2F3?alt=media")
    assert data == b"a/sub/3"
    assert gcp.delete("/storage/v1/b/bkt/o/c")[0] == 204
    assert gcp.get("/storage/v1/b/bkt/o/c")[0] == 404
    assert gcp.get("/storage/v1/b/bkt/o?maxResults=5000")[0] == 200
