"""The Textual playground: widgets, screens and the app."""
