#!/usr/bin/env python3
"""Converts the Cilium agent OpenAPI (Swagger 2.0) YAML into the JSON the conformance tests read.

The C++ tests must not depend on a YAML parser, so the conversion is done once and the output
(tests/fakes/cilium/openapi.json) is committed. Re-run after updating the reference spec:

    python3 tests/fakes/cilium/tools/openapi_to_json.py \
        /work/shared/reference/cilium/openapi.yaml tests/fakes/cilium/openapi.json

Needs PyYAML (Debian: python3-yaml). Keys are sorted so that diffs stay small.
"""
import json
import sys

import yaml


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    # YAML may type some scalars (dates, numbers-as-keys); the spec means them as text.
    text = json.dumps(spec, indent=1, sort_keys=True, default=str, ensure_ascii=False)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
