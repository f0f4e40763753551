"""The models against the schema `rbd-sync migrate` made in the test database."""
import io

from django.apps import apps
from django.core.management import call_command
from django.db import NotSupportedError
from django.test import TestCase

from ..models import Image, Run
from .support import MIB, add_cluster, add_image, add_pool, add_snapshot


class Models(TestCase):
    def test_every_model_reads_its_table_or_view_with_every_column(self):
        for model in apps.get_app_config("rbdsync_console").get_models():
            with self.subTest(model=model.__name__):
                self.assertEqual(list(model.objects.all()[:1]), [])

    def test_keys_of_the_views_join_images_to_their_pool_parent_and_snapshots(self):
        add_cluster()
        add_pool(1, "rbd")
        add_image(1, "golden", "g1", 16 * MIB, snapshot_count=1)
        add_snapshot(1, "g1", 4, "s1", 16 * MIB, protected=True, children=1)
        add_image(1, "vm-1", "c1", 16 * MIB, parent=(1, "rbd", "g1", "golden", 4, "s1"))
        golden = Image.objects.select_related("pool_row").get(name="golden")
        self.assertEqual(golden.pool_row.name, "rbd")
        self.assertEqual([s.name for s in golden.snapshots.all()], ["s1"])
        self.assertEqual([c.name for c in golden.clones.all()], ["vm-1"])
        self.assertEqual(Image.objects.get(name="vm-1").parent, golden)
        self.assertEqual(Image.objects.get(name="vm-1").parent_path, "rbd/golden@s1")

    def test_nothing_is_written_through_the_models(self):
        add_cluster()
        add_pool(1, "rbd")
        add_image(1, "golden", "g1", 16 * MIB)
        image = Image.objects.get(name="golden")
        image.name = "renamed"
        for attempt in (image.save, image.delete, Image.objects.all().delete,
                        lambda: Image.objects.update(name="x"),
                        lambda: Run.objects.bulk_create([Run()])):
            with self.subTest(attempt=attempt), self.assertRaises(NotSupportedError):
                attempt()
        self.assertEqual(Image.objects.get(image_id="g1").name, "golden")

    def test_the_migrations_describe_the_models(self):
        out = io.StringIO()
        # Exits 1 (SystemExit) when a model changed without its migration.
        call_command("makemigrations", "rbdsync_console", "--check", "--dry-run", stdout=out)
        self.assertIn("No changes detected", out.getvalue())
