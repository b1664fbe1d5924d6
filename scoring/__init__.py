"""Pure scoring library: loaders, judges, decide and aggregate. No Streamlit, no SQL."""
