"""schema.py - api/openapi.json as a response checker (Python standard library only).

A small JSON Schema validator for the subset the document uses (draft 2020-12 keywords of
OpenAPI 3.1): $ref, type (one or a list), enum, const, properties, required,
additionalProperties, items, min/maxItems, min/maxLength, pattern, minimum, maximum,
exclusiveMinimum, exclusiveMaximum, min/maxProperties, oneOf, anyOf, allOf, format
(date-time). Annotations (description, examples, default, contentEncoding) are ignored. A
keyword outside this set is an error, so the document cannot silently use something the
checker does not check.

    api = schema.api()                           # the parsed document, cached
    api.check_response("GET", "/v1/namespaces/a", 200, "application/json", raw_bytes)

raises SchemaError naming the operation, the status and the JSON path of the first
mismatch.
"""

import json
import math
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DOC_PATH = os.path.join(ROOT, "api", "openapi.json")

ANNOTATIONS = {"description", "examples", "example", "default", "contentEncoding", "title",
               "summary", "deprecated", "readOnly", "writeOnly", "$comment"}
KEYWORDS = {"$ref", "type", "enum", "const", "properties", "required", "additionalProperties",
            "items", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum",
            "maximum", "exclusiveMinimum", "exclusiveMaximum", "minProperties",
            "maxProperties", "oneOf", "anyOf", "allOf", "format"}
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class SchemaError(AssertionError):
    pass


def _type_ok(t, v):
    if t == "null":
        return v is None
    if t == "boolean":
        return isinstance(v, bool)
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if isinstance(v, bool):
        return False
    if t == "integer":
        return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v) and v == int(v))
    if t == "number":
        return isinstance(v, (int, float))
    raise SchemaError("unknown type %r in the document" % t)


class Doc:
    def __init__(self, doc):
        self.doc = doc
        self.paths = doc["paths"]

    # ---- schemas
    def resolve(self, s):
        seen = 0
        while isinstance(s, dict) and "$ref" in s:
            r = s["$ref"]
            if not r.startswith("#/"):
                raise SchemaError("external $ref %r" % r)
            node = self.doc
            for part in r[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            if len(s) > 1:  # siblings of $ref (3.1): both apply
                extra = {k: v for k, v in s.items() if k != "$ref"}
                node = {"allOf": [node, extra]}
            s = node
            seen += 1
            if seen > 64:
                raise SchemaError("$ref loop at %r" % r)
        return s

    def validate(self, schema, v, where="$"):
        s = self.resolve(schema)
        if s is True or s == {}:
            return
        if s is False:
            raise SchemaError("%s: no value is allowed here" % where)
        for k in s:
            if k not in KEYWORDS and k not in ANNOTATIONS and not k.startswith("x-"):
                raise SchemaError("%s: keyword %r is not supported by tests/e2e/schema.py" % (where, k))
        if "type" in s:
            ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_type_ok(t, v) for t in ts):
                raise SchemaError("%s: %s is not of type %s" % (where, _short(v), "|".join(ts)))
        if "enum" in s and v not in s["enum"]:
            raise SchemaError("%s: %s is not one of %s" % (where, _short(v), s["enum"]))
        if "const" in s and v != s["const"]:
            raise SchemaError("%s: %s is not %r" % (where, _short(v), s["const"]))
        if isinstance(v, str):
            if "minLength" in s and len(v) < s["minLength"]:
                raise SchemaError("%s: shorter than %d" % (where, s["minLength"]))
            if "maxLength" in s and len(v) > s["maxLength"]:
                raise SchemaError("%s: longer than %d" % (where, s["maxLength"]))
            if "pattern" in s and not re.search(s["pattern"], v):
                raise SchemaError("%s: %s does not match %s" % (where, _short(v), s["pattern"]))
            if s.get("format") == "date-time" and not RFC3339.match(v):
                raise SchemaError("%s: %s is not an RFC 3339 date-time" % (where, _short(v)))
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if "minimum" in s and v < s["minimum"]:
                raise SchemaError("%s: %r < minimum %r" % (where, v, s["minimum"]))
            if "maximum" in s and v > s["maximum"]:
                raise SchemaError("%s: %r > maximum %r" % (where, v, s["maximum"]))
            if "exclusiveMinimum" in s and v <= s["exclusiveMinimum"]:
                raise SchemaError("%s: %r <= exclusiveMinimum %r" % (where, v, s["exclusiveMinimum"]))
            if "exclusiveMaximum" in s and v >= s["exclusiveMaximum"]:
                raise SchemaError("%s: %r >= exclusiveMaximum %r" % (where, v, s["exclusiveMaximum"]))
        if isinstance(v, list):
            if "minItems" in s and len(v) < s["minItems"]:
                raise SchemaError("%s: fewer than %d items" % (where, s["minItems"]))
            if "maxItems" in s and len(v) > s["maxItems"]:
                raise SchemaError("%s: more than %d items" % (where, s["maxItems"]))
            if "items" in s:
                for i, x in enumerate(v):
                    self.validate(s["items"], x, "%s[%d]" % (where, i))
        if isinstance(v, dict):
            if "minProperties" in s and len(v) < s["minProperties"]:
                raise SchemaError("%s: fewer than %d keys" % (where, s["minProperties"]))
            if "maxProperties" in s and len(v) > s["maxProperties"]:
                raise SchemaError("%s: more than %d keys" % (where, s["maxProperties"]))
            for r in s.get("required", ()):
                if r not in v:
                    raise SchemaError("%s: required key %r is missing in %s" % (where, r, _short(v)))
            props = s.get("properties", {})
            for k, x in v.items():
                if k in props:
                    self.validate(props[k], x, "%s.%s" % (where, k))
                elif "additionalProperties" in s:
                    ap = s["additionalProperties"]
                    if ap is False:
                        raise SchemaError("%s: key %r is not documented" % (where, k))
                    self.validate(ap, x, "%s.%s" % (where, k))
        if "allOf" in s:
            for sub in s["allOf"]:
                self.validate(sub, v, where)
        if "anyOf" in s:
            errs = []
            for sub in s["anyOf"]:
                try:
                    self.validate(sub, v, where)
                    break
                except SchemaError as e:
                    errs.append(str(e))
            else:
                raise SchemaError("%s: matches none of anyOf: %s" % (where, "; ".join(errs)))
        if "oneOf" in s:
            errs, n = [], 0
            for sub in s["oneOf"]:
                try:
                    self.validate(sub, v, where)
                    n += 1
                except SchemaError as e:
                    errs.append(str(e))
            if n != 1:
                raise SchemaError("%s: matches %d of oneOf (want 1)%s" %
                                  (where, n, ": " + "; ".join(errs) if n == 0 else ""))

    # ---- operations
    def match_path(self, path):
        """The path template a concrete path (no query) falls under, or None."""
        parts = path.split("/")
        for t in self.paths:
            tp = t.split("/")
            if len(tp) == len(parts) and all(
                    (a.startswith("{") and a.endswith("}") and b) or a == b
                    for a, b in zip(tp, parts)):
                return t
        return None

    def operation(self, method, path):
        t = self.match_path(path.split("?", 1)[0])
        if t is None:
            return None, None
        return t, self.paths[t].get(method.lower())

    def response_spec(self, op, status):
        r = op["responses"].get(str(status)) or op["responses"].get("default")
        return self.resolve(r) if r else None

    def check_response(self, method, path, status, ctype, raw):
        """Raise SchemaError when the answer is not what the document says."""
        if method == "HEAD":
            return
        t, op = self.operation(method, path)
        what = "%s %s -> %s" % (method, path.split("?", 1)[0], status)
        if op is None:
            # an undocumented path or method: only an error answer is acceptable
            if status < 400:
                raise SchemaError("%s: success on an undocumented operation" % what)
            if raw and "json" in (ctype or ""):
                self._check_media(ctype, raw, what, {"$ref": "#/components/schemas/Error"})
            return
        spec = self.response_spec(op, status)
        if spec is None:
            raise SchemaError("%s: status %d is not documented for %s %s (documented: %s)"
                              % (what, status, method, t, sorted(op["responses"])))
        content = spec.get("content")
        if not content:
            if raw:
                raise SchemaError("%s: documented without a body, got %r" % (what, raw[:80]))
            return
        mt = (ctype or "").split(";")[0].strip().lower()
        if mt not in content:
            raise SchemaError("%s: content type %r, documented %s" % (what, ctype, sorted(content)))
        self._check_media(ctype, raw, what, content[mt].get("schema", {}))

    def _check_media(self, ctype, raw, what, schema):
        mt = (ctype or "").split(";")[0].strip().lower()
        try:
            if mt == "application/json":
                value = json.loads(raw.decode("utf-8"))
                self.validate(schema, value)
            elif mt == "application/x-ndjson":
                lines = raw.decode("utf-8").split("\n")
                if lines[-1] == "":
                    lines.pop()  # the newline that ends the last line (or an empty body)
                for i, line in enumerate(lines):
                    self.validate(schema, json.loads(line), "line %d" % (i + 1))
            elif mt.startswith("text/"):
                self.validate(schema, raw.decode("utf-8"))
            else:
                raise SchemaError("unexpected content type %r" % ctype)
        except SchemaError as e:
            raise SchemaError("%s: %s" % (what, e))
        except ValueError as e:
            raise SchemaError("%s: body is not valid %s: %s" % (what, mt, e))


def _short(v, n=160):
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[:n] + "..."


_cache = {}


def api(path=DOC_PATH):
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            _cache[path] = Doc(json.load(f))
    return _cache[path]
