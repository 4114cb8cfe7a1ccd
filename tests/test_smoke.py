from django.conf import settings


def test_settings_load_offline_defaults():
    assert settings.SPACEDUCK_EMBEDDINGS["provider"] == "hash"
