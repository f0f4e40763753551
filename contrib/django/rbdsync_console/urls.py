from django.urls import path

from . import views

app_name = "rbdsync_console"

urlpatterns = [
    path("", views.block_storage, name="block_storage"),
    path("inventory/", views.inventory, name="inventory"),
    path("image/", views.image, name="image"),
    path("sync/", views.sync_now, name="sync_now"),
    path("runs/<uuid:run_id>/", views.run_progress, name="run_progress"),
]
