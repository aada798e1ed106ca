//! What the user does to the audit screens: keys become actions through the keymap, text
//! goes into line editors, a picker narrows a list, the mouse points at a row. Nothing here
//! changes the screens' state: `app` applies what these produce.

pub mod action;
pub mod keymap;
pub mod line_edit;
pub mod mouse;
pub mod pick;
