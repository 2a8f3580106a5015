"""One module per demo topic: each demo's parameters model and :class:`DemoSpec`."""
