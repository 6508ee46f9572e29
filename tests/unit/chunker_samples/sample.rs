//! A tiny parser for key=value config files.

use std::collections::HashMap;

/// A parsed configuration.
#[derive(Debug, Default, Clone)]
pub struct Config {
    values: HashMap<String, String>,
}

impl Config {
    /// Parses `text`, one `key=value` per line.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut values = HashMap::new();
        for line in text.lines() {
            let (k, v) = split_pair(line)?;
            values.insert(k.to_string(), v.to_string());
        }
        Ok(Config { values })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} keys", self.values.len())
    }
}

#[derive(Debug)]
pub enum ParseError {
    MissingEquals(usize),
}

fn split_pair(line: &str) -> Result<(&str, &str), ParseError> {
    line.split_once('=').ok_or(ParseError::MissingEquals(line.len()))
}
