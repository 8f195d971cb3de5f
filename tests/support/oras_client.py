"""The ORAS project's Python client (oras-py), driven by tests/parts/registry.rs.

    oras_client.py push REFERENCE FILE:MEDIA_TYPE [CONFIG_PATH:CONFIG_MEDIA_TYPE]
    oras_client.py pull REFERENCE OUTDIR        prints the files written, one a line
    oras_client.py tags REPOSITORY              prints the tags as a JSON array
    oras_client.py manifest REFERENCE           prints the manifest as JSON

Plain HTTP (a registry on 127.0.0.1). `push` writes what ORAS writes: an OCI 1.0 style
artifact whose type is its config.mediaType, no artifactType.
"""

import json
import sys

import oras.client


def main(argv):
    client = oras.client.OrasClient(insecure=True)
    command, reference, *rest = argv
    if command == "push":
        files, config = rest[0], (rest[1] if len(rest) > 1 else None)
        response = client.push(
            reference,
            files=[files],
            manifest_config=config,
            disable_path_validation=True,
            quiet=True,
        )
        print(response.headers.get("Docker-Content-Digest", ""))
    elif command == "pull":
        for path in client.pull(reference, outdir=rest[0]):
            print(path)
    elif command == "tags":
        print(json.dumps(client.get_tags(reference)))
    elif command == "manifest":
        accept = [
            "application/vnd.oci.image.manifest.v1+json",
            "application/vnd.oci.image.index.v1+json",
        ]
        print(json.dumps(client.get_manifest(reference, allowed_media_type=accept)))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
