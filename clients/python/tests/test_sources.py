"""Sources through the client against a real docindex server: a web source on a local site
(127.0.0.3, which run-against-server.sh admits with URL_FETCH_ALLOW) created, listed, read, changed,
synced, its runs listed, and deleted; a configuration the server refuses is an InvalidRequestError.
"""

import unittest

from docindex import InvalidRequestError, NotFoundError

from .support import ScriptedServer, live_client, run_tag

WAIT_SECONDS = 60.0
PAGE = (
    b"<!doctype html><html><head><title>Weirs</title></head>"
    b"<body><p>Salmon leap the weir below the old mill.</p></body></html>"
)


class SourcesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def test_a_web_source_from_creation_to_deletion(self) -> None:
        tag = run_tag()
        # robots.txt (none), then the one page.
        replies = [(404, [], b""), (200, [("Content-Type", "text/html; charset=utf-8")], PAGE)]
        with ScriptedServer(replies, host="127.0.0.3") as site:  # type: ignore[arg-type]
            start = site.url + "/"
            source = self.client.create_source(
                "web",
                "python site",
                {"start_urls": [start], "max_pages": 10, "max_depth": 0},
                metadata={"run": tag},
            )
            self.assertTrue(source["id"].startswith("src_"))
            self.assertEqual(source["type"], "web")
            self.assertEqual(source["config"]["same_host"], True)
            self.assertFalse(source["has_credentials"])
            self.assertIn(source["id"], [s["id"] for s in self.client.list_sources()])
            self.assertEqual(self.client.get_source(source["id"])["name"], "python site")

            renamed = self.client.update_source(source["id"], name="python site, renamed", schedule="P1D")
            self.assertEqual(renamed["name"], "python site, renamed")
            self.assertEqual(renamed["schedule"], "P1D")

            run_id = self.client.sync_source(source["id"])
            run = self.client.wait_for_source_run(source["id"], run_id, timeout=WAIT_SECONDS, poll_interval=0.1)
            self.assertEqual(run["status"], "completed", run)
            self.assertEqual((run["added"], run["failed"]), (1, 0))
            self.assertEqual([r["run_id"] for r in self.client.list_source_runs(source["id"], limit=5)], [run_id])
            self.assertEqual([r.path for r in site.requests], ["/robots.txt", "/"])

        page = self.client.list_documents(filter={"run": tag})
        self.assertEqual([d.metadata["source_key"] for d in page.documents], [start])
        self.assertEqual(page.documents[0].external_id, "{}:{}".format(source["id"], start))

        self.client.delete_source(source["id"])
        with self.assertRaises(NotFoundError):
            self.client.get_source(source["id"])

    def test_a_configuration_the_server_refuses(self) -> None:
        with self.assertRaises(InvalidRequestError) as caught:
            self.client.create_source("web", "too big", {"start_urls": ["http://127.0.0.1:9/"], "max_pages": 20000, "max_depth": 1})
        self.assertEqual([e.pointer for e in caught.exception.errors], ["/config/max_pages"])


if __name__ == "__main__":
    unittest.main()
