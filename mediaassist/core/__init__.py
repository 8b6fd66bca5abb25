"""The Qt-free core: store, scheduler, config, import. Nothing under here may import Qt."""
